/* One instance of an exported model: its values, and the model's evaluation, start and
   events (instance.c) on which the FMI interface (fmi2.c) is built. */
#ifndef FMU_INSTANCE_H
#define FMU_INSTANCE_H

#include "fmi2_types.h"
#include "fmu_config.h"
#include "fmu_model.h"

#define N(k) ((k) > 0 ? (k) : 1) /* C has no arrays of length 0 */
#define NS (FMU_NX + FMU_NM)     /* the model's state vector: continuous states, then modes */

typedef enum { INSTANTIATED, INITIALIZATION, EVENT, CONTINUOUS, TERMINATED } Phase;

typedef struct {
  fmi2CallbackFunctions cb;
  char *name;
  int logging;
  Phase phase;
  double t;
  double atol;           /* the importer's tolerance: the floor of the crossings' noise bands */
  double p[N(FMU_NP)];   /* the parameters as set */
  double pe[N(FMU_NP)];  /* as evaluated: the modes' start values settled at the start */
  double x[N(NS)];
  double z[N(FMU_NZ)];   /* the last Newton solution: the next guess */
  double zg[N(FMU_NZ)];  /* Newton's guess, apart from its result */
  double xdot[N(NS)];
  double y[N(FMU_NY)];
  double b[N(FMU_NB)];
  double c[N(FMU_NC)];
  double m[N(NS)];
  double sigma[N(FMU_NC)]; /* each crossing's remembered side: -1, +1, 0 undecided */
  double scale[N(FMU_NC)]; /* the largest |c| seen */
  double residual;
  int started;      /* the start values have been computed */
  int fresh;        /* z, xdot, c, ... belong to the current (x, p, t) */
  int read;         /* and so does y */
  int first_event;  /* the event mode right after initialization: nothing to iterate */
  double *visited;  /* event iteration's rounds: (x, z, sigma) each */
  double *steps;    /* co-simulation: the step's start (x, z), its result and error */
  double h;         /* co-simulation: the next step size to try */
  double rtol;      /* co-simulation: the step's error tolerance (relative and absolute) */
  const double **arg; /* CasADi's work arrays */
  double **res;
  casadi_int *iw;
  double *w;
  int mem[5];
} Instance;

void say(Instance *s, fmi2Status status, const char *format, ...);
int allocate_work(Instance *s);
void release_work(Instance *s);
fmi2Status start_values(Instance *s);
fmi2Status evaluate(Instance *s);
fmi2Status values(Instance *s); /* evaluate, and the value slots y too */
void event_indicators(const Instance *s, double *e);
double band(const Instance *s, int i);
double sign(double v);
int fired(const Instance *s, int i);
double next_breakpoint(const Instance *s); /* the first breakpoint after t, or infinity */
void seen(Instance *s);
fmi2Status event_iteration(Instance *s, int *states_changed);
fmi2Status advance(Instance *s, double t_end);

#endif
