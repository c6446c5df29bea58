/* SPDX-License-Identifier: MIT */
/*
 * cli_mpi.h: the little of MPI that oocgemm multiply uses to split one job
 * across the ranks of mpirun or srun (tools/multiply_mpi.c): start only when
 * a launcher started us, rank, size, local rank, bytes broadcast and
 * gathered, reductions, a non-blocking sum for the polling loop, and the
 * agreement on failures that lets every rank stop cleanly (never
 * MPI_Abort). Built without MPI (./configure --without-mpi) every function
 * is a stub of a job of one rank. Only the main thread calls these.
 */
#ifndef OOCGEMM_CLI_MPI_H
#define OOCGEMM_CLI_MPI_H

#include <stddef.h>
#include <stdint.h>

/* Ranks a launcher says it started us among: OMPI_COMM_WORLD_SIZE (Open
 * MPI), PMI_SIZE (MPICH's Hydra, Intel MPI), SLURM_STEP_NUM_TASKS with
 * SLURM_PROCID (srun); -1 when only PMIX_RANK says so (PMIx, size unknown);
 * 0 when no launcher started us (a plain `oocgemm`). */
int cli_mpi_launched(void);
/* This process's rank: MPI's once started, else the one its launcher gave
 * (OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID with SLURM_STEP_NUM_TASKS,
 * PMIX_RANK): known also where MPI is not started (built without it); 0
 * when no launcher started us. */
int cli_mpi_launched_rank(void);

/* Start MPI when a launcher started us with more than one rank (or an
 * unknown number): a plain `oocgemm`, or `mpirun -np 1`, never calls
 * MPI_Init. Returns 0, or -1 with why[len] when a launcher started several
 * ranks but this oocgemm was built without MPI (each would run the whole
 * job). Idempotent. */
int cli_mpi_start(char *why, size_t len);
/* MPI was started and the job has more than one rank. */
int cli_mpi_active(void);
int cli_mpi_rank(void);
int cli_mpi_size(void);
/* The rank among those of its node (MPI_COMM_TYPE_SHARED), and their number. */
int cli_mpi_local_rank(void);
int cli_mpi_local_size(void);
const char *cli_mpi_host(void);
/* "oocgemm (rank R of N, HOST)", the name a rank's messages start with, when
 * a launcher started N > 1 ranks (known from its environment before MPI
 * starts: a usage error is said under it too); else "oocgemm" */
const char *cli_mpi_name(void);
/* MPI_Finalize, once, if started, after a barrier: no rank exits (which
 * mpirun answers, when its status is not 0, by killing the others) before
 * every rank, rank 0 with its JSON object, has written its output. */
void cli_mpi_finish(void);

/* Collectives: every rank calls them in the same order. */
void cli_mpi_barrier(void);
void cli_mpi_bcast(void *buf, size_t n);                  /* from rank 0 */
void cli_mpi_gather(const void *mine, size_t n, void *all); /* to rank 0: all holds size * n bytes */

typedef enum { CLI_MPI_MIN, CLI_MPI_MAX, CLI_MPI_SUM } cli_mpi_op_t;
void cli_mpi_allreduce_i64(int64_t *v, int n, cli_mpi_op_t op); /* in place */
void cli_mpi_allreduce_max(double *v, int n);                   /* in place */
int cli_mpi_any(int mine);                                      /* logical or */

/* A sum over the ranks that does not block: start it, then test until it
 * is done (the polling loop sleeps between tests instead of spinning). At
 * most 8 values, one sum at a time. */
void cli_mpi_isum_start(const int64_t *v, int n);
int cli_mpi_isum_test(int64_t *out);

/* Did any rank fail? Each rank gives its exit status (0: success) and
 * whether the failure is its own (1) or it only stopped because another
 * rank failed (0). Every rank gets the status of the lowest rank that failed
 * on its own (RC_INTERRUPTED when only stops were reported: impossible by
 * construction), 0 when none failed; *who: that rank, -1 when none. msg
 * (cap bytes, every rank's own message; NULL: none, on every rank alike:
 * a collective) becomes that rank's. */
int cli_mpi_agree(int rc, int own, int *who, char *msg, size_t cap);

#endif /* OOCGEMM_CLI_MPI_H */
