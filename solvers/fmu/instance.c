/* The model's evaluation, consistent start and events for one instance of an exported model,
   with the semantics of the project's simulator (solvers/events.py, solvers/crossings.py):

   - a crossing function c_i has a remembered side sigma_i (0 while undecided) and a noise
     band band_i = max(1e-11 max|c_i| seen, 1e-3 atol); it fires when sigma_i c_i < -band_i
     (|c_i| > band_i when undecided). The event indicator is c_i + sigma_i band_i, whose
     root is where the simulator locates the event;
   - at an event the crossings that fired take their new sides, then the event iteration:
     the relations' modes set from the sides, one round of the mode updates and
     re-initializations, the algebraic unknowns re-solved, the sides flipped with hysteresis,
     until nothing changes; a cycle keeps the state where it began (with a warning);
   - at the start, the modes' start values (parameters <mode>_start) are settled by the same
     iteration before the run begins. */

#include "instance.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define BAND 1e-11        /* a crossing's noise band, relative to the largest |c| seen */
#define EVENT_ROUNDS 50   /* rounds of event iteration at one instant */
#define ROW (NS + FMU_NZ + FMU_NC) /* one visited round: x, z, sigma */

void say(Instance *s, fmi2Status status, const char *format, ...) {
  char text[1024];
  va_list args;
  const char *category = status == fmi2OK ? "logEvents"
                         : status == fmi2Warning ? "logStatusWarning"
                                                 : "logStatusError";
  if (s->cb.logger == NULL || (status == fmi2OK && !s->logging)) return;
  va_start(args, format);
  vsnprintf(text, sizeof text, format, args);
  va_end(args);
  s->cb.logger(s->cb.componentEnvironment, s->name, status, category, "%s", text);
}

/* ---- CasADi's functions and their work arrays ---- */
typedef int (*WorkSizes)(casadi_int *, casadi_int *, casadi_int *, casadi_int *);

/* ``most``: the largest work sizes (arg, res, iw, w) so far and those of ``work`` */
static void widen(casadi_int most[4], WorkSizes work) {
  casadi_int size[4];
  int j;
  work(&size[0], &size[1], &size[2], &size[3]);
  for (j = 0; j < 4; ++j)
    if (size[j] > most[j]) most[j] = size[j];
}

int allocate_work(Instance *s) {
  casadi_int most[4] = {0, 0, 0, 0};
  widen(most, fmu_init_work);
  widen(most, fmu_solve_work);
  widen(most, fmu_point_work);
  widen(most, fmu_values_work);
#if FMU_TYPE == 1 /* fmu_step: co-simulation only */
  widen(most, fmu_step_work);
#endif
  s->arg = (const double **)s->cb.allocateMemory(most[0] + 1, sizeof(double *));
  s->res = (double **)s->cb.allocateMemory(most[1] + 1, sizeof(double *));
  s->iw = (casadi_int *)s->cb.allocateMemory(most[2] + 1, sizeof(casadi_int));
  s->w = (double *)s->cb.allocateMemory(most[3] + 1, sizeof(double));
  s->visited = (double *)s->cb.allocateMemory((EVENT_ROUNDS + 1) * ROW, sizeof(double));
  s->steps = (double *)s->cb.allocateMemory(4 * NS + FMU_NZ + 3 * FMU_NC + 1, sizeof(double));
  fmu_init_incref();
  fmu_solve_incref();
  fmu_point_incref();
  fmu_values_incref();
  s->mem[0] = fmu_init_checkout();
  s->mem[1] = fmu_solve_checkout();
  s->mem[2] = fmu_point_checkout();
  s->mem[3] = fmu_values_checkout();
#if FMU_TYPE == 1
  fmu_step_incref();
  s->mem[4] = fmu_step_checkout();
#endif
  return s->arg && s->res && s->iw && s->w && s->visited && s->steps;
}

void release_work(Instance *s) {
  fmu_init_release(s->mem[0]);
  fmu_solve_release(s->mem[1]);
  fmu_point_release(s->mem[2]);
  fmu_values_release(s->mem[3]);
  fmu_init_decref();
  fmu_solve_decref();
  fmu_point_decref();
  fmu_values_decref();
#if FMU_TYPE == 1
  fmu_step_release(s->mem[4]);
  fmu_step_decref();
#endif
  s->cb.freeMemory((void *)s->arg);
  s->cb.freeMemory(s->res);
  s->cb.freeMemory(s->iw);
  s->cb.freeMemory(s->w);
  s->cb.freeMemory(s->visited);
  s->cb.freeMemory(s->steps);
}

static int all_finite(const double *v, int n) {
  int k;
  for (k = 0; k < n; ++k)
    if (!isfinite(v[k])) return 0;
  return 1;
}

/* r = max |residual| is Newton's answer to rounding: below 1e-8 of the unknowns' size */
static int solved(double r, const double *v, int n) {
  double size = 1.0;
  int k;
  for (k = 0; k < n; ++k)
    if (fabs(v[k]) > size) size = fabs(v[k]);
  return isfinite(r) && r <= 1e-8 * size;
}

static void at_point(Instance *s) {
  s->arg[0] = s->x;
  s->arg[1] = s->z;
  s->arg[2] = s->pe;
  s->arg[3] = &s->t;
}

/* (xdot, b, c, m) at (x, z, pe, t), z as it is */
static fmi2Status point(Instance *s) {
  at_point(s);
  s->res[0] = s->xdot;
  s->res[1] = s->b;
  s->res[2] = s->c;
  s->res[3] = s->m;
  s->read = 0;
  if (fmu_point(s->arg, s->res, s->iw, s->w, s->mem[2]) || !all_finite(s->xdot, NS)) {
    say(s, fmi2Error,
        "%s: the state derivatives are not finite at t = %g; the states may have left the "
        "model's valid range",
        FMU_MODEL_NAME, s->t);
    return fmi2Error;
  }
  s->fresh = 1;
  return fmi2OK;
}

/* z solving the algebraic equations at (x, pe, t), Newton from the last z */
static fmi2Status solve(Instance *s) {
  if (FMU_NZ == 0) return fmi2OK;
  memcpy(s->zg, s->z, sizeof(double) * FMU_NZ);
  s->arg[0] = s->x;
  s->arg[1] = s->zg;
  s->arg[2] = s->pe;
  s->arg[3] = &s->t;
  s->res[0] = s->z;
  s->res[1] = &s->residual;
  if (fmu_solve(s->arg, s->res, s->iw, s->w, s->mem[1]) || !solved(s->residual, s->z, FMU_NZ)) {
    say(s, fmi2Error,
        "%s: the algebraic equations have no solution near the last one at t = %g (largest "
        "residual %g after Newton); the states may have left the model's valid range",
        FMU_MODEL_NAME, s->t, s->residual);
    return fmi2Error;
  }
  return fmi2OK;
}

fmi2Status values(Instance *s) {
  if (evaluate(s) != fmi2OK) return fmi2Error;
  if (s->read) return fmi2OK;
  at_point(s);
  s->res[0] = s->y;
  if (fmu_values(s->arg, s->res, s->iw, s->w, s->mem[3])) return fmi2Error;
  s->read = 1;
  return fmi2OK;
}

fmi2Status evaluate(Instance *s) {
  if (s->fresh) return fmi2OK;
  if (!s->started) return start_values(s);
  return solve(s) == fmi2OK ? point(s) : fmi2Error;
}

/* ---- the crossings' sides ---- */
double band(const Instance *s, int i) {
  double b = BAND * s->scale[i], floor = 1e-3 * s->atol;
  return b > floor ? b : floor;
}

double sign(double v) { return (double)((v > 0) - (v < 0)); }

void seen(Instance *s) {
  int i;
  for (i = 0; i < FMU_NC; ++i)
    if (fabs(s->c[i]) > s->scale[i]) s->scale[i] = fabs(s->c[i]);
}

/* the sides at the start (the largest |c| seen: this point's) */
static void sides_start(Instance *s) {
  int i;
  memset(s->scale, 0, sizeof(double) * N(FMU_NC));
  seen(s);
  for (i = 0; i < FMU_NC; ++i) {
    s->sigma[i] = fabs(s->c[i]) > band(s, i) ? sign(s->c[i]) : 0.0;
    if (s->sigma[i] == 0.0 && FMU_RELATIONS[i] >= 0)
      s->sigma[i] = 2.0 * s->x[FMU_NX + FMU_RELATIONS[i]] - 1.0; /* the relation's start value */
  }
}

int fired(const Instance *s, int i) {
  double b = band(s, i);
  return s->sigma[i] != 0.0 ? s->sigma[i] * s->c[i] < -b : fabs(s->c[i]) > b;
}

/* hysteresis: the crossings that fired take the side they went to; whether any did */
static int flip(Instance *s) {
  int i, any = 0;
  for (i = 0; i < FMU_NC; ++i)
    if (fired(s, i)) {
      s->sigma[i] = sign(s->c[i]);
      any = 1;
    }
  return any;
}

/* each relation's mode (among ``modes``) from its crossing's side */
static void relation_modes(const Instance *s, double *modes) {
  int i;
  for (i = 0; i < FMU_NC; ++i)
    if (FMU_RELATIONS[i] >= 0) modes[FMU_RELATIONS[i]] = s->sigma[i] > 0 ? 1.0 : 0.0;
}

void event_indicators(const Instance *s, double *e) {
  int i;
  for (i = 0; i < FMU_NC; ++i) e[i] = s->c[i] + s->sigma[i] * band(s, i);
}

double next_breakpoint(const Instance *s) {
  double next = INFINITY;
  int k;
  for (k = 0; k < FMU_NB; ++k)
    if (s->b[k] > s->t + 1e-14 * fabs(s->t) && s->b[k] < next) next = s->b[k];
  return next;
}

static int equal(const double *a, const double *b, int n) {
  int k;
  for (k = 0; k < n; ++k)
    if (a[k] != b[k]) return 0;
  return 1;
}

/* ---- the start ---- */
static fmi2Status initialize(Instance *s) {
  double t0 = s->t;
  s->arg[0] = s->pe;
  s->arg[1] = &t0;
  s->res[0] = s->x;
  s->res[1] = s->z;
  s->res[2] = &s->residual;
  if (fmu_init(s->arg, s->res, s->iw, s->w, s->mem[0]) || !all_finite(s->x, NS) ||
      !solved(s->residual, s->x, NS)) {
    say(s, fmi2Error,
        "%s: the start values could not be made consistent at t = %g (largest residual of the "
        "initialization %g); check the parameters and start values",
        FMU_MODEL_NAME, t0, s->residual);
    return fmi2Error;
  }
  return point(s);
}

/* the modes' start values updated until the event iteration changes nothing */
static fmi2Status settle(Instance *s) {
  int round, k, j;
  double *modes = s->m + FMU_NX;
  for (round = 0; round < EVENT_ROUNDS; ++round) {
    relation_modes(s, s->x + FMU_NX);
    if (point(s) != fmi2OK) return fmi2Error; /* m: the updates at the start */
    relation_modes(s, modes);
    for (j = 0; j < FMU_NM && modes[j] == s->pe[FMU_MODE_STARTS[j]]; ++j) continue;
    if (j == FMU_NM) return fmi2OK;
    for (k = 0; k < round; ++k) {
      const double *row = s->visited + k * ROW;
      if (equal(row, modes, FMU_NM) && equal(row + FMU_NM, s->sigma, FMU_NC)) break;
    }
    if (k < round) break;
    memcpy(s->visited + round * ROW, modes, sizeof(double) * FMU_NM);
    memcpy(s->visited + round * ROW + FMU_NM, s->sigma, sizeof(double) * FMU_NC);
    for (j = 0; j < FMU_NM; ++j) s->pe[FMU_MODE_STARTS[j]] = modes[j];
    if (initialize(s) != fmi2OK) return fmi2Error;
    flip(s);
  }
  say(s, fmi2Error,
      "%s: the modes do not settle at the start (event iteration cycles); give start values "
      "of the modes that agree with the start state",
      FMU_MODEL_NAME);
  return fmi2Error;
}

fmi2Status start_values(Instance *s) {
  memcpy(s->pe, s->p, sizeof(double) * FMU_NP);
  if (initialize(s) != fmi2OK) return fmi2Error;
  sides_start(s);
  if (FMU_NM) { /* settled, the start made again from the settled modes, its sides anew */
    if (settle(s) != fmi2OK || initialize(s) != fmi2OK) return fmi2Error;
    sides_start(s);
  }
  s->started = 1;
  s->first_event = 1;
  return fmi2OK;
}

/* ---- an event ---- */
static fmi2Status keep(Instance *s, const double *row, int length) {
  int i;
  memcpy(s->x, row, sizeof(double) * NS);
  memcpy(s->z, row + NS, sizeof(double) * FMU_NZ);
  if (point(s) != fmi2OK) return fmi2Error;
  for (i = 0; i < FMU_NC; ++i)
    if (fabs(s->c[i]) > band(s, i)) s->sigma[i] = sign(s->c[i]);
  say(s, fmi2Warning,
      "%s: at t = %.9g the modes alternate (%d states in a cycle of event iteration); kept the "
      "first",
      FMU_MODEL_NAME, s->t, length);
  return fmi2OK;
}

fmi2Status event_iteration(Instance *s, int *states_changed) {
  double *before = s->visited + EVENT_ROUNDS * ROW;
  int round, k;
  if (evaluate(s) != fmi2OK) return fmi2Error;
  memcpy(before, s->x, sizeof(double) * NS);
  flip(s); /* the crossings that fired take their new sides */
  for (round = 0; round < EVENT_ROUNDS; ++round) {
    int same, flipped;
    relation_modes(s, s->x + FMU_NX);
    if (point(s) != fmi2OK) return fmi2Error; /* m: one round of updates at (x, z) */
    relation_modes(s, s->m + FMU_NX);
    same = equal(s->m, s->x, NS);
    memcpy(s->x, s->m, sizeof(double) * NS);
    s->fresh = 0;
    if (evaluate(s) != fmi2OK) return fmi2Error; /* z re-solved, the crossings there */
    flipped = flip(s);
    if (!flipped && same) break;
    for (k = 0; k < round; ++k) {
      const double *row = s->visited + k * ROW;
      if (equal(row, s->x, NS) && equal(row + NS + FMU_NZ, s->sigma, FMU_NC)) break;
    }
    if (k < round) {
      if (keep(s, s->visited + k * ROW, round - k) != fmi2OK) return fmi2Error;
      break;
    }
    memcpy(s->visited + round * ROW, s->x, sizeof(double) * NS);
    memcpy(s->visited + round * ROW + NS, s->z, sizeof(double) * FMU_NZ);
    memcpy(s->visited + round * ROW + NS + FMU_NZ, s->sigma, sizeof(double) * FMU_NC);
  }
  if (round == EVENT_ROUNDS) {
    say(s, fmi2Error,
        "%s: the modes do not settle at t = %g after %d rounds of event iteration; check the "
        "mode updates of the components",
        FMU_MODEL_NAME, s->t, EVENT_ROUNDS);
    return fmi2Error;
  }
  *states_changed = !equal(before, s->x, FMU_NX);
  for (k = FMU_NX; k < NS; ++k) /* (logged when logging is on) */
    if (before[k] != s->x[k])
      say(s, fmi2OK, "t = %.12g: mode %d %g -> %g", s->t, k - FMU_NX, before[k], s->x[k]);
  return fmi2OK;
}
