/* Co-simulation: the FMU's own integration from one communication point to the next.

   Steps of the generated RODAS4 step function (solvers/fmu/step.py) under error control:
   err_norm = rms(err_k / (rtol (1 + max(|x_k|, |x1_k|)))), accepted when <= 1, the next size
   h min(5, max(0.2, 0.9 err_norm^(-1/4))). Steps end at the communication point and at
   breakpoints (the inputs' jumps, where the event iteration runs). After an accepted step
   the crossings are checked as the simulator checks them at its output times: where one
   fired, the event instant is located by the Illinois variant of regula falsi on the step
   size (each trial a step from the accepted step's start), the state taken just past it,
   and the event iteration run (instance.c). */

#include <float.h>
#include <math.h>
#include <string.h>

#include "instance.h"

#if FMU_TYPE == 1 /* a co-simulation FMU: its code holds fmu_step */

#define MAX_STEPS 10000000L    /* steps within one communication interval */
#define LOCATE_ITERATIONS 100

/* work areas within s->steps: the step's start (x, z), its result, its error estimate */
#define X0(s) ((s)->steps)
#define Z0(s) ((s)->steps + NS)
#define X1(s) ((s)->steps + NS + FMU_NZ)
#define ERR(s) ((s)->steps + 2 * NS + FMU_NZ)
#define C0(s) ((s)->steps + 3 * NS + FMU_NZ)

/* one RODAS4 step of size h from (X0, Z0) at t0 into X1, ERR; 0 when it failed */
static int rodas4(Instance *s, double t0, double h) {
  s->arg[0] = X0(s);
  s->arg[1] = X0(s) + FMU_NX;
  s->arg[2] = Z0(s);
  s->arg[3] = s->pe;
  s->arg[4] = &t0;
  s->arg[5] = &h;
  s->res[0] = X1(s);
  s->res[1] = ERR(s);
  return fmu_step(s->arg, s->res, s->iw, s->w, s->mem[4]) == 0;
}

/* the step size's factor for an error norm: 0.9 norm^(-1/4) (RODAS4's estimate is third
   order) */
static double scale(double norm) { return 0.9 * pow(norm, -0.25); }

static double error_norm(const Instance *s) {
  double sum = 0.0;
  int k;
  for (k = 0; k < FMU_NX; ++k) {
    double size = fabs(X0(s)[k]) > fabs(X1(s)[k]) ? fabs(X0(s)[k]) : fabs(X1(s)[k]);
    double e = ERR(s)[k] / (s->rtol * (1.0 + size));
    sum += e * e;
  }
  return FMU_NX ? sqrt(sum / FMU_NX) : 0.0;
}

/* the state at t0 + h from the step's start (modes held), evaluated there; 0 on failure */
static int state_at(Instance *s, double t0, double h) {
  if (!rodas4(s, t0, h)) return 0;
  memcpy(s->x, X1(s), sizeof(double) * FMU_NX);
  memcpy(s->z, Z0(s), sizeof(double) * FMU_NZ);
  s->t = t0 + h;
  s->fresh = 0;
  return evaluate(s) == fmi2OK;
}

/* the smallest step past the root of c_i - target in (0, span], c_i - target being f_lo at
   0 and f_hi at span (Illinois), as the simulator locates an event */
static double locate(Instance *s, int i, double t0, double span, double f_lo, double f_hi,
                     double target) {
  double lo = 0.0, hi = span, tol = 1e-12 * (1.0 + fabs(t0) + span);
  int side = 0, k;
  for (k = 0; k < LOCATE_ITERATIONS && hi - lo > tol; ++k) {
    double h = hi - f_hi * (hi - lo) / (f_hi - f_lo), f;
    if (!(lo < h && h < hi)) h = 0.5 * (lo + hi);
    if (!state_at(s, t0, h)) return hi;
    f = s->c[i] - target;
    if ((f > 0) == (f_hi > 0)) {
      hi = h;
      f_hi = f;
      if (side == 1) f_lo /= 2;
      side = 1;
    } else {
      lo = h;
      f_lo = f;
      if (side == -1) f_hi /= 2;
      side = -1;
    }
  }
  return hi;
}

/* after an accepted step of size h from t0: the first crossing that fired, located; the
   state moved there and the event iteration run. 1 if an event happened, -1 on failure */
static int crossed(Instance *s, double t0, double h) {
  double first = h, *c1 = C0(s) + FMU_NC, *targets = C0(s) + 2 * FMU_NC;
  int i, any = 0, changed;
  memcpy(c1, s->c, sizeof(double) * FMU_NC);
  for (i = 0; i < FMU_NC; ++i) { /* the level each fired crossing fires at; NAN: not fired */
    targets[i] = NAN;
    if (fired(s, i)) {
      targets[i] = (s->sigma[i] != 0.0 ? -s->sigma[i] : sign(c1[i])) * band(s, i);
      any = 1;
    }
  }
  if (!any) {
    seen(s);
    return 0;
  }
  for (i = 0; i < FMU_NC; ++i) /* (locating moves the state: s->c is not c1 any more) */
    if (!isnan(targets[i])) {
      double at = locate(s, i, t0, h, C0(s)[i] - targets[i], c1[i] - targets[i], targets[i]);
      if (at < first) first = at;
    }
  if (!state_at(s, t0, first)) return -1;
  return event_iteration(s, &changed) == fmi2OK ? 1 : -1;
}

/* step from the current (x, z, t) to t_end */
fmi2Status advance(Instance *s, double t_end) {
  long n;
  if (s->h <= 0.0) s->h = 1e-3 * (t_end - s->t);
  for (n = 0; n < MAX_STEPS && s->t < t_end; ++n) {
    double t0 = s->t, stop = next_breakpoint(s), h, norm;
    int at_breakpoint = 0, event;
    if (stop > t_end) stop = t_end;
    h = s->h;
    if (t0 + h >= stop || stop - (t0 + h) < 1e-12 * (1.0 + fabs(stop))) {
      h = stop - t0;
      at_breakpoint = stop < t_end || next_breakpoint(s) == t_end;
    }
    if (h <= 4 * DBL_EPSILON * fabs(t0) || h < 1e-300) { /* t + h would be t */
      say(s, fmi2Error,
          "%s: the step size fell to %g at t = %.12g, where time no longer moves; the model "
          "may be singular there, or the tolerance too tight",
          FMU_MODEL_NAME, h, t0);
      return fmi2Error;
    }
    if (evaluate(s) != fmi2OK) return fmi2Error; /* (after a rejected step: anew at t0) */
    memcpy(X0(s), s->x, sizeof(double) * NS);
    memcpy(Z0(s), s->z, sizeof(double) * FMU_NZ);
    memcpy(C0(s), s->c, sizeof(double) * FMU_NC);
    norm = rodas4(s, t0, h) ? error_norm(s) : INFINITY;
    if (!(norm <= 1.0) || !state_at(s, t0, h)) { /* rejected: back, and a shorter step */
      memcpy(s->x, X0(s), sizeof(double) * NS);
      memcpy(s->z, Z0(s), sizeof(double) * FMU_NZ);
      s->t = t0;
      s->fresh = 0;
      s->h = h * (isfinite(norm) && norm > 1.0 ? fmax(0.2, scale(norm)) : 0.25);
      continue;
    }
    s->h = h * fmin(5.0, fmax(0.2, scale(fmax(norm, 1e-10))));
    event = crossed(s, t0, h);
    if (event < 0) return fmi2Error;
    if (event == 0 && at_breakpoint) { /* a time event: the inputs jump */
      int changed;
      s->t = stop;
      s->fresh = 0;
      if (event_iteration(s, &changed) != fmi2OK) return fmi2Error;
    }
  }
  if (s->t < t_end) {
    say(s, fmi2Error, "%s: more than %ld steps between t = %g and %g", FMU_MODEL_NAME,
        MAX_STEPS, s->t, t_end);
    return fmi2Error;
  }
  return fmi2OK;
}
#else
fmi2Status advance(Instance *s, double t_end) {
  (void)t_end;
  say(s, fmi2Error, "%s was exported for model exchange: it does not step itself",
      FMU_MODEL_NAME);
  return fmi2Error;
}
#endif
