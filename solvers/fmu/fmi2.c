/* The FMI 2.0 interface of an exported model (model exchange and co-simulation), written for
   this project.

   The model itself is instance.c (evaluation, consistent start, events) and, for
   co-simulation, cosim.c (the integrator), over the CasADi-generated functions of
   fmu_model.c; fmu_config.h gives the sizes, the GUID and the start values. The modes (relations and discrete variables) are the last FMU_NM entries of
   the model's state vector x: the FMU keeps them apart from its continuous states and
   updates them at events.

   Value references: 0 .. FMU_NP-1 the parameters, FMU_NP .. FMU_NP+FMU_NY-1 the value slots
   (variables with one slot are aliases). */

#include <math.h>
#include <string.h>

#include "instance.h"

/* where the importer gives no tolerance: the simulator's default atol (the crossings' noise
   bands), and the co-simulation steps' error tolerance */
#define DEFAULT_TOLERANCE 1e-8
#define DEFAULT_STEP_TOLERANCE 1e-6

#if defined(__GNUC__)
#define FMI2_EXPORT __attribute__((visibility("default")))
#else
#define FMI2_EXPORT
#endif

/* ---- creation and destruction ---- */
FMI2_EXPORT void fmi2FreeInstance(fmi2Component c);
FMI2_EXPORT fmi2Status fmi2Reset(fmi2Component c);

FMI2_EXPORT const char *fmi2GetTypesPlatform(void) { return "default"; }
FMI2_EXPORT const char *fmi2GetVersion(void) { return "2.0"; }

FMI2_EXPORT fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid,
                                          fmi2String location,
                                          const fmi2CallbackFunctions *functions,
                                          fmi2Boolean visible, fmi2Boolean logging) {
  Instance *s;
  (void)location;
  (void)visible;
  if (functions == NULL || functions->allocateMemory == NULL) return NULL;
  if (guid == NULL || strcmp(guid, FMU_GUID) != 0) {
    if (functions->logger)
      functions->logger(functions->componentEnvironment, name, fmi2Error, "logStatusError",
                        "the GUID %s is not this FMU's (%s): the modelDescription.xml and the "
                        "binary come from different exports",
                        guid ? guid : "(none)", FMU_GUID);
    return NULL;
  }
  if (type != FMU_TYPE) {
    if (functions->logger)
      functions->logger(functions->componentEnvironment, name, fmi2Error, "logStatusError",
                        "this FMU was exported for %s only; export it again with that kind",
                        FMU_TYPE == fmi2ModelExchange ? "model exchange" : "co-simulation");
    return NULL;
  }
  s = (Instance *)functions->allocateMemory(1, sizeof(Instance));
  if (s == NULL) return NULL;
  memset(s, 0, sizeof(Instance));
  s->cb = *functions;
  s->name = (char *)functions->allocateMemory(strlen(name ? name : "") + 1, 1);
  if (s->name) strcpy(s->name, name ? name : "");
  s->logging = logging;
  if (!allocate_work(s)) {
    fmi2FreeInstance(s);
    return NULL;
  }
  fmi2Reset(s);
  return s;
}

FMI2_EXPORT void fmi2FreeInstance(fmi2Component c) {
  Instance *s = (Instance *)c;
  if (s == NULL) return;
  release_work(s);
  s->cb.freeMemory(s->name);
  s->cb.freeMemory(s);
}

FMI2_EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n,
                                           const fmi2String categories[]) {
  (void)n;
  (void)categories;
  ((Instance *)c)->logging = on;
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean has_tolerance,
                                           fmi2Real tolerance, fmi2Real start,
                                           fmi2Boolean has_stop, fmi2Real stop) {
  Instance *s = (Instance *)c;
  (void)has_stop;
  (void)stop;
  s->atol = has_tolerance && tolerance > 0 ? tolerance : DEFAULT_TOLERANCE;
  s->rtol = has_tolerance && tolerance > 0 ? tolerance : DEFAULT_STEP_TOLERANCE;
  s->t = start;
  s->started = 0;
  s->fresh = 0;
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c) {
  Instance *s = (Instance *)c;
  s->phase = INITIALIZATION;
  s->started = 0;
  s->fresh = 0;
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
  Instance *s = (Instance *)c;
  if (evaluate(s) != fmi2OK) return fmi2Error;
  s->phase = EVENT;
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2Terminate(fmi2Component c) {
  ((Instance *)c)->phase = TERMINATED;
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2Reset(fmi2Component c) {
  Instance *s = (Instance *)c;
  s->atol = DEFAULT_TOLERANCE;
  s->rtol = DEFAULT_STEP_TOLERANCE;
  s->h = 0.0;
  memcpy(s->p, FMU_PARAMETER_STARTS, sizeof(double) * FMU_NP);
  memcpy(s->z, FMU_Z_GUESS, sizeof(double) * FMU_NZ);
  s->t = FMU_START_TIME;
  s->started = 0;
  s->fresh = 0;
  s->phase = INSTANTIATED;
  return fmi2OK;
}

/* ---- variables ---- */
FMI2_EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                   fmi2Real value[]) {
  Instance *s = (Instance *)c;
  size_t k;
  int computed = 0;
  for (k = 0; k < n; ++k) computed |= vr[k] >= FMU_NP;
  if (computed && values(s) != fmi2OK) return fmi2Error;
  for (k = 0; k < n; ++k) {
    if (vr[k] < FMU_NP)
      value[k] = s->p[vr[k]];
    else if (vr[k] < FMU_NP + FMU_NY)
      value[k] = s->y[vr[k] - FMU_NP];
    else {
      say(s, fmi2Error, "%s has no Real variable with value reference %u",
          FMU_MODEL_NAME, vr[k]);
      return fmi2Error;
    }
  }
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                   const fmi2Real value[]) {
  Instance *s = (Instance *)c;
  size_t k;
  for (k = 0; k < n; ++k) {
    if (vr[k] >= FMU_NP) {
      say(s, fmi2Error,
          "%s: value reference %u is a computed variable; only parameters can be set",
          FMU_MODEL_NAME, vr[k]);
      return fmi2Error;
    }
    s->p[vr[k]] = value[k];
    s->pe[vr[k]] = value[k]; /* a tunable parameter acts from now on */
  }
  if (n && s->phase <= INITIALIZATION) s->started = 0; /* the start values follow them */
  s->fresh = 0;
  return fmi2OK;
}

static fmi2Status none_of(fmi2Component c, size_t n, const char *kind) {
  Instance *s = (Instance *)c;
  if (n == 0) return fmi2OK;
  say(s, fmi2Error, "%s has no %s variables", FMU_MODEL_NAME, kind);
  return fmi2Error;
}

FMI2_EXPORT fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                      fmi2Integer value[]) {
  (void)vr;
  (void)value;
  return none_of(c, n, "Integer");
}
FMI2_EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                      const fmi2Integer value[]) {
  (void)vr;
  (void)value;
  return none_of(c, n, "Integer");
}
FMI2_EXPORT fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                      fmi2Boolean value[]) {
  (void)vr;
  (void)value;
  return none_of(c, n, "Boolean");
}
FMI2_EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                      const fmi2Boolean value[]) {
  (void)vr;
  (void)value;
  return none_of(c, n, "Boolean");
}
FMI2_EXPORT fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                     fmi2String value[]) {
  (void)vr;
  (void)value;
  return none_of(c, n, "String");
}
FMI2_EXPORT fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                     const fmi2String value[]) {
  (void)vr;
  (void)value;
  return none_of(c, n, "String");
}

/* ---- what this FMU does not offer (its capability flags say so) ---- */
static fmi2Status unsupported(fmi2Component c, const char *what) {
  say((Instance *)c, fmi2Error, "%s: %s is not supported by this FMU",
      FMU_MODEL_NAME, what);
  return fmi2Error;
}
FMI2_EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *state) {
  (void)state;
  return unsupported(c, "fmi2GetFMUstate");
}
FMI2_EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state) {
  (void)state;
  return unsupported(c, "fmi2SetFMUstate");
}
FMI2_EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *state) {
  (void)state;
  return unsupported(c, "fmi2FreeFMUstate");
}
FMI2_EXPORT fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate state,
                                                  size_t *size) {
  (void)state;
  (void)size;
  return unsupported(c, "fmi2SerializedFMUstateSize");
}
FMI2_EXPORT fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate state,
                                             fmi2Byte bytes[], size_t size) {
  (void)state;
  (void)bytes;
  (void)size;
  return unsupported(c, "fmi2SerializeFMUstate");
}
FMI2_EXPORT fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte bytes[],
                                               size_t size, fmi2FMUstate *state) {
  (void)bytes;
  (void)size;
  (void)state;
  return unsupported(c, "fmi2DeSerializeFMUstate");
}
FMI2_EXPORT fmi2Status fmi2GetDirectionalDerivative(fmi2Component c,
                                                    const fmi2ValueReference unknown[],
                                                    size_t n_unknown,
                                                    const fmi2ValueReference known[],
                                                    size_t n_known, const fmi2Real seed[],
                                                    fmi2Real sensitivity[]) {
  (void)unknown;
  (void)n_unknown;
  (void)known;
  (void)n_known;
  (void)seed;
  (void)sensitivity;
  return unsupported(c, "fmi2GetDirectionalDerivative");
}

/* ---- model exchange ---- */
FMI2_EXPORT fmi2Status fmi2EnterEventMode(fmi2Component c) {
  ((Instance *)c)->phase = EVENT;
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info) {
  Instance *s = (Instance *)c;
  int changed = 0;
  s->fresh = 0; /* the inputs may have jumped at this instant */
  if (s->first_event) { /* right after initialization: the modes are settled */
    s->first_event = 0;
    if (evaluate(s) != fmi2OK) return fmi2Error;
  } else if (event_iteration(s, &changed) != fmi2OK)
    return fmi2Error;
  info->newDiscreteStatesNeeded = fmi2False;
  info->terminateSimulation = fmi2False;
  info->nominalsOfContinuousStatesChanged = fmi2False;
  info->valuesOfContinuousStatesChanged = changed ? fmi2True : fmi2False;
  /* the next breakpoint (a step input's time) is a time event, so that the importer's
     integrator stops there instead of stepping over the jump */
  info->nextEventTime = next_breakpoint(s);
  info->nextEventTimeDefined = isfinite(info->nextEventTime) ? fmi2True : fmi2False;
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) {
  ((Instance *)c)->phase = CONTINUOUS;
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean no_set_state,
                                                   fmi2Boolean *enter_event_mode,
                                                   fmi2Boolean *terminate) {
  Instance *s = (Instance *)c;
  (void)no_set_state;
  *enter_event_mode = fmi2False;
  *terminate = fmi2False;
  if (evaluate(s) != fmi2OK) return fmi2Error;
  seen(s); /* the crossings' noise bands widen with what the run has seen */
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time) {
  Instance *s = (Instance *)c;
  s->t = time;
  s->fresh = 0;
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t n) {
  Instance *s = (Instance *)c;
  if (n != FMU_NX) {
    say(s, fmi2Error, "%s has %d continuous states, not %d", FMU_MODEL_NAME,
        FMU_NX, (int)n);
    return fmi2Error;
  }
  if (!s->started && start_values(s) != fmi2OK) return fmi2Error;
  memcpy(s->x, x, sizeof(double) * n);
  s->fresh = 0;
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real xdot[], size_t n) {
  Instance *s = (Instance *)c;
  if (evaluate(s) != fmi2OK) return fmi2Error;
  memcpy(xdot, s->xdot, sizeof(double) * n);
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real indicators[], size_t n) {
  Instance *s = (Instance *)c;
  if (evaluate(s) != fmi2OK) return fmi2Error;
  if (n) event_indicators(s, indicators);
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {
  Instance *s = (Instance *)c;
  if (!s->started && start_values(s) != fmi2OK) return fmi2Error;
  memcpy(x, s->x, sizeof(double) * n);
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real nominal[],
                                                         size_t n) {
  size_t k;
  (void)c;
  for (k = 0; k < n; ++k) nominal[k] = 1.0;
  return fmi2OK;
}

/* ---- co-simulation ---- */
FMI2_EXPORT fmi2Status fmi2DoStep(fmi2Component c, fmi2Real current, fmi2Real step,
                                  fmi2Boolean no_set_prior) {
  Instance *s = (Instance *)c;
  (void)no_set_prior;
  if (fabs(current - s->t) > 1e-9 * (1.0 + fabs(current))) {
    say(s, fmi2Error,
        "%s: a step from t = %.12g, but the FMU is at t = %.12g (it cannot go back: it does "
        "not save states)",
        FMU_MODEL_NAME, current, s->t);
    return fmi2Error;
  }
  s->first_event = 0;
  return advance(s, current + step);
}

FMI2_EXPORT fmi2Status fmi2CancelStep(fmi2Component c) {
  return unsupported(c, "fmi2CancelStep (steps are not asynchronous)");
}

FMI2_EXPORT fmi2Status fmi2SetRealInputDerivatives(fmi2Component c,
                                                   const fmi2ValueReference vr[], size_t n,
                                                   const fmi2Integer order[],
                                                   const fmi2Real value[]) {
  (void)vr;
  (void)order;
  (void)value;
  return none_of(c, n, "input");
}

FMI2_EXPORT fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c,
                                                    const fmi2ValueReference vr[], size_t n,
                                                    const fmi2Integer order[],
                                                    fmi2Real value[]) {
  (void)vr;
  (void)order;
  (void)value;
  return n ? unsupported(c, "fmi2GetRealOutputDerivatives") : fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind kind,
                                     fmi2Status *value) {
  (void)kind;
  (void)value;
  return unsupported(c, "fmi2GetStatus");
}

FMI2_EXPORT fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind kind,
                                         fmi2Real *value) {
  if (kind != fmi2LastSuccessfulTime) return unsupported(c, "fmi2GetRealStatus of this kind");
  *value = ((Instance *)c)->t;
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind kind,
                                            fmi2Integer *value) {
  (void)kind;
  (void)value;
  return unsupported(c, "fmi2GetIntegerStatus");
}

FMI2_EXPORT fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind kind,
                                            fmi2Boolean *value) {
  if (kind != fmi2Terminated) return unsupported(c, "fmi2GetBooleanStatus of this kind");
  *value = fmi2False;
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind kind,
                                           fmi2String *value) {
  (void)kind;
  (void)value;
  return unsupported(c, "fmi2GetStringStatus");
}
