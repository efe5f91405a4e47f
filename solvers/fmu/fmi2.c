/* The FMI 2.0 interface of an exported model (model exchange), written for this project.

   The model's functions are CasADi-generated C (fmu_model.c):
     fmu_init(p, t0) -> (x0, z0, r)         consistent start: Newton on the initialization rows
     fmu_eval(x, zguess, p, t) -> (xdot, z, y, r, b, c, m)
                                            z by Newton from zguess, the rates, every value slot,
                                            r = max |g| at z, the breakpoints b(p), the crossing
                                            functions c and the modes' new values m
   and fmu_config.h gives the sizes, the GUID and the names used in messages. The modes
   (relations and discrete variables) are the last FMU_NM entries of the model's state vector
   x; the FMU keeps them apart from its continuous states and updates them at events.

   Value references: 0 .. FMU_NP-1 the parameters, FMU_NP .. FMU_NP+FMU_NY-1 the value slots
   (variables with one slot are aliases). */

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmu_config.h"
#include "fmu_model.h"

#if defined(__GNUC__)
#define FMI2_EXPORT __attribute__((visibility("default")))
#else
#define FMI2_EXPORT
#endif

/* ---- the FMI 2.0 types (fmi2TypesPlatform.h, fmi2FunctionTypes.h of the standard) ---- */
typedef void *fmi2Component;
typedef void *fmi2ComponentEnvironment;
typedef void *fmi2FMUstate;
typedef unsigned int fmi2ValueReference;
typedef double fmi2Real;
typedef int fmi2Integer;
typedef int fmi2Boolean;
typedef char fmi2Char;
typedef const fmi2Char *fmi2String;
typedef char fmi2Byte;
#define fmi2True 1
#define fmi2False 0

typedef enum { fmi2OK, fmi2Warning, fmi2Discard, fmi2Error, fmi2Fatal, fmi2Pending } fmi2Status;
typedef enum { fmi2ModelExchange, fmi2CoSimulation } fmi2Type;
typedef enum { fmi2DoStepStatus, fmi2PendingStatus, fmi2LastSuccessfulTime, fmi2Terminated }
    fmi2StatusKind;

typedef void (*fmi2CallbackLogger)(fmi2ComponentEnvironment, fmi2String, fmi2Status, fmi2String,
                                   fmi2String, ...);
typedef void *(*fmi2CallbackAllocateMemory)(size_t, size_t);
typedef void (*fmi2CallbackFreeMemory)(void *);
typedef void (*fmi2StepFinished)(fmi2ComponentEnvironment, fmi2Status);

typedef struct {
  fmi2CallbackLogger logger;
  fmi2CallbackAllocateMemory allocateMemory;
  fmi2CallbackFreeMemory freeMemory;
  fmi2StepFinished stepFinished;
  fmi2ComponentEnvironment componentEnvironment;
} fmi2CallbackFunctions;

typedef struct {
  fmi2Boolean newDiscreteStatesNeeded;
  fmi2Boolean terminateSimulation;
  fmi2Boolean nominalsOfContinuousStatesChanged;
  fmi2Boolean valuesOfContinuousStatesChanged;
  fmi2Boolean nextEventTimeDefined;
  fmi2Real nextEventTime;
} fmi2EventInfo;

/* ---- one instance ---- */
#define N(k) ((k) > 0 ? (k) : 1) /* C has no arrays of length 0 */

typedef enum { INSTANTIATED, INITIALIZATION, EVENT, CONTINUOUS, TERMINATED } Phase;

typedef struct {
  fmi2CallbackFunctions cb;
  char *name;
  int logging;
  Phase phase;
  double t;
  double p[N(FMU_NP)];
  double x[N(FMU_NX + FMU_NM)]; /* continuous states, then the modes */
  double z[N(FMU_NZ)];          /* the last Newton solution: the next guess */
  double xdot[N(FMU_NX + FMU_NM)];
  double y[N(FMU_NY)];
  double b[N(FMU_NB)];
  double c[N(FMU_NC)];
  double m[N(FMU_NX + FMU_NM)];
  double residual;
  int started; /* the start values have been computed */
  int fresh;   /* xdot, y, ... belong to the current (x, p, t) */
  /* CasADi's work arrays */
  const double **arg;
  double **res;
  long long *iw;
  double *w;
  int mem_init, mem_eval;
} Instance;

static void say(Instance *s, fmi2Status status, const char *category, const char *format, ...) {
  char text[1024];
  va_list args;
  if (s->cb.logger == NULL) return;
  if (status == fmi2OK && !s->logging) return;
  va_start(args, format);
  vsnprintf(text, sizeof text, format, args);
  va_end(args);
  s->cb.logger(s->cb.componentEnvironment, s->name, status, category, "%s", text);
}

static int all_finite(const double *v, int n) {
  int k;
  for (k = 0; k < n; ++k)
    if (!isfinite(v[k])) return 0;
  return 1;
}

/* r = max |g| is acceptable: the Newton tolerance of the generated solver, relative to z */
static int solved(double r, const double *z, int n) {
  double scale = 1.0;
  int k;
  for (k = 0; k < n; ++k)
    if (fabs(z[k]) > scale) scale = fabs(z[k]);
  return isfinite(r) && r <= 1e-8 * scale;
}

static fmi2Status start_values(Instance *s) {
  double t0 = s->t;
  s->arg[0] = s->p;
  s->arg[1] = &t0;
  s->res[0] = s->x;
  s->res[1] = s->z;
  s->res[2] = &s->residual;
  if (fmu_init(s->arg, s->res, s->iw, s->w, s->mem_init) ||
      !all_finite(s->x, FMU_NX + FMU_NM) || !solved(s->residual, s->x, FMU_NX + FMU_NM)) {
    say(s, fmi2Error, "logStatusError",
        "%s: the start values could not be made consistent at t = %g (largest residual of the "
        "initialization %g); check the parameters and start values",
        FMU_MODEL_NAME, t0, s->residual);
    return fmi2Error;
  }
  s->started = 1;
  s->fresh = 0;
  return fmi2OK;
}

static fmi2Status evaluate(Instance *s) {
  if (s->fresh) return fmi2OK;
  if (!s->started && start_values(s) != fmi2OK) return fmi2Error;
  s->arg[0] = s->x;
  s->arg[1] = s->z;
  s->arg[2] = s->p;
  s->arg[3] = &s->t;
  s->res[0] = s->xdot;
  s->res[1] = s->z;
  s->res[2] = s->y;
  s->res[3] = &s->residual;
  s->res[4] = s->b;
  s->res[5] = s->c;
  s->res[6] = s->m;
  if (fmu_eval(s->arg, s->res, s->iw, s->w, s->mem_eval) || !all_finite(s->xdot, FMU_NX) ||
      !solved(s->residual, s->z, FMU_NZ)) {
    say(s, fmi2Error, "logStatusError",
        "%s: the algebraic equations have no solution near the last one at t = %g (largest "
        "residual %g after Newton), or the rates are not finite; the states may have left "
        "the model's valid range",
        FMU_MODEL_NAME, s->t, s->residual);
    return fmi2Error;
  }
  s->fresh = 1;
  return fmi2OK;
}

/* ---- creation and destruction ---- */
FMI2_EXPORT const char *fmi2GetTypesPlatform(void) { return "default"; }
FMI2_EXPORT const char *fmi2GetVersion(void) { return "2.0"; }

FMI2_EXPORT fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid,
                                          fmi2String location,
                                          const fmi2CallbackFunctions *functions,
                                          fmi2Boolean visible, fmi2Boolean logging) {
  Instance *s;
  casadi_int n_arg, n_res, n_iw, n_w, a, r, i, w;
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
  s->cb = *functions;
  s->name = (char *)functions->allocateMemory(strlen(name ? name : "") + 1, 1);
  if (s->name) strcpy(s->name, name ? name : "");
  s->logging = logging;
  fmu_init_work(&n_arg, &n_res, &n_iw, &n_w);
  fmu_eval_work(&a, &r, &i, &w);
  n_arg = a > n_arg ? a : n_arg;
  n_res = r > n_res ? r : n_res;
  n_iw = i > n_iw ? i : n_iw;
  n_w = w > n_w ? w : n_w;
  s->arg = (const double **)functions->allocateMemory(n_arg + 1, sizeof(double *));
  s->res = (double **)functions->allocateMemory(n_res + 1, sizeof(double *));
  s->iw = (long long *)functions->allocateMemory(n_iw + 1, sizeof(casadi_int));
  s->w = (double *)functions->allocateMemory(n_w + 1, sizeof(double));
  fmu_init_incref();
  fmu_eval_incref();
  s->mem_init = fmu_init_checkout();
  s->mem_eval = fmu_eval_checkout();
  memcpy(s->p, FMU_PARAMETER_STARTS, sizeof(double) * FMU_NP);
  memcpy(s->z, FMU_Z_GUESS, sizeof(double) * FMU_NZ);
  s->t = FMU_START_TIME;
  s->phase = INSTANTIATED;
  return s;
}

FMI2_EXPORT void fmi2FreeInstance(fmi2Component c) {
  Instance *s = (Instance *)c;
  fmi2CallbackFreeMemory release;
  if (s == NULL) return;
  release = s->cb.freeMemory;
  fmu_init_release(s->mem_init);
  fmu_eval_release(s->mem_eval);
  fmu_init_decref();
  fmu_eval_decref();
  release((void *)s->arg);
  release(s->res);
  release(s->iw);
  release(s->w);
  release(s->name);
  release(s);
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
  (void)has_tolerance;
  (void)tolerance;
  (void)has_stop;
  (void)stop;
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
  if (!s->started && start_values(s) != fmi2OK) return fmi2Error;
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
  if (computed && evaluate(s) != fmi2OK) return fmi2Error;
  for (k = 0; k < n; ++k) {
    if (vr[k] < FMU_NP)
      value[k] = s->p[vr[k]];
    else if (vr[k] < FMU_NP + FMU_NY)
      value[k] = s->y[vr[k] - FMU_NP];
    else {
      say(s, fmi2Error, "logStatusError", "%s has no Real variable with value reference %u",
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
      say(s, fmi2Error, "logStatusError",
          "%s: value reference %u is a computed variable; only parameters can be set",
          FMU_MODEL_NAME, vr[k]);
      return fmi2Error;
    }
    s->p[vr[k]] = value[k];
  }
  if (n && s->phase <= INITIALIZATION) s->started = 0; /* the start values follow them */
  s->fresh = 0;
  return fmi2OK;
}

static fmi2Status none_of(fmi2Component c, size_t n, const char *kind) {
  Instance *s = (Instance *)c;
  if (n == 0) return fmi2OK;
  say(s, fmi2Error, "logStatusError", "%s has no %s variables", FMU_MODEL_NAME, kind);
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
  say((Instance *)c, fmi2Error, "logStatusError", "%s: %s is not supported by this FMU",
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

/* The next breakpoint after t (a step input's time): a time event, so that the importer's
   integrator stops there instead of stepping over the jump. */
static void next_time_event(Instance *s, fmi2EventInfo *info) {
  int k;
  info->nextEventTimeDefined = fmi2False;
  for (k = 0; k < FMU_NB; ++k) {
    double b = s->b[k];
    if (b > s->t * (1 + 1e-14) + 1e-300 && b > s->t &&
        (!info->nextEventTimeDefined || b < info->nextEventTime)) {
      info->nextEventTimeDefined = fmi2True;
      info->nextEventTime = b;
    }
  }
}

FMI2_EXPORT fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info) {
  Instance *s = (Instance *)c;
  s->fresh = 0; /* the inputs may have jumped at this instant */
  if (evaluate(s) != fmi2OK) return fmi2Error;
  info->newDiscreteStatesNeeded = fmi2False;
  info->terminateSimulation = fmi2False;
  info->nominalsOfContinuousStatesChanged = fmi2False;
  info->valuesOfContinuousStatesChanged = fmi2False;
  next_time_event(s, info);
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) {
  ((Instance *)c)->phase = CONTINUOUS;
  return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean no_set_state,
                                                   fmi2Boolean *enter_event_mode,
                                                   fmi2Boolean *terminate) {
  (void)c;
  (void)no_set_state;
  *enter_event_mode = fmi2False;
  *terminate = fmi2False;
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
    say(s, fmi2Error, "logStatusError", "%s has %d continuous states, not %d", FMU_MODEL_NAME,
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
  memcpy(indicators, s->c, sizeof(double) * n);
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
