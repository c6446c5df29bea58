/* SPDX-License-Identifier: MIT */
/*
 * cli_mpi.c: the ranks of an MPI job for oocgemm multiply (see cli_mpi.h).
 * With HAVE_MPI, MPI is started only when a launcher started several ranks;
 * without it, or when not started, every call is that of a job of one rank.
 * Nothing here aborts: failures are agreed (cli_mpi_agree) so that every
 * rank stops cleanly with a message naming the rank that failed.
 */
#include "config.h"

#include "cli.h"
#include "cli_mpi.h"

#ifdef HAVE_MPI
#include <mpi.h>
#endif

static int started, rank, size = 1, local_rank, local_size = 1;
static char host[256];

static long env_long(const char *name)
{
    const char *s = getenv(name);
    if (s == NULL || *s == '\0') return -1;
    char *end;
    long v = strtol(s, &end, 10);
    return *end == '\0' && v >= 0 ? v : -1;
}

int cli_mpi_launched(void)
{
    long n;
    if ((n = env_long("OMPI_COMM_WORLD_SIZE")) > 0) return (int)n;
    if ((n = env_long("PMI_SIZE")) > 0) return (int)n;
    if (getenv("SLURM_PROCID") && (n = env_long("SLURM_STEP_NUM_TASKS")) > 0) return (int)n;
    if (getenv("PMIX_RANK")) return -1;
    return 0;
}

int cli_mpi_launched_rank(void)
{
    long r;
    if (started) return rank;
    if ((r = env_long("OMPI_COMM_WORLD_RANK")) >= 0) return (int)r;
    if ((r = env_long("PMI_RANK")) >= 0) return (int)r;
    if (env_long("SLURM_STEP_NUM_TASKS") > 0 && (r = env_long("SLURM_PROCID")) >= 0) return (int)r;
    if ((r = env_long("PMIX_RANK")) >= 0) return (int)r;
    return 0;
}

int cli_mpi_start(char *why, size_t len)
{
    if (host[0] == '\0' && gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "?");
    int n = cli_mpi_launched();
    if (started || n == 0 || n == 1) return 0;
#ifdef HAVE_MPI
    (void)why, (void)len;
    int provided = 0, inited = 0;
    MPI_Initialized(&inited);
    if (!inited) MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_size(node, &local_size);
    MPI_Comm_free(&node);
    started = 1;
    return 0;
#else
    char count[32] = "several";
    if (n > 0) snprintf(count, sizeof count, "%d", n);
    snprintf(why, len,
             "a launcher (mpirun, srun) started %s ranks, but this oocgemm was built without MPI: each rank would "
             "run the whole job; rebuild with ./configure --with-mpi, or run one oocgemm", count);
    return -1;
#endif
}

int cli_mpi_active(void) { return started && size > 1; }

const char *cli_mpi_name(void)
{
    static char name[400];
    int n = started ? size : cli_mpi_launched();
    if (n <= 1) return "oocgemm"; /* (one rank, or a PMIx launch that gives no size before MPI starts) */
    if (host[0] == '\0' && gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "?");
    snprintf(name, sizeof name, "oocgemm (rank %d of %d, %s)", cli_mpi_launched_rank(), n, host);
    return name;
}
int cli_mpi_rank(void) { return rank; }
int cli_mpi_size(void) { return size; }
int cli_mpi_local_rank(void) { return local_rank; }
int cli_mpi_local_size(void) { return local_size; }
const char *cli_mpi_host(void) { return host; }

void cli_mpi_finish(void)
{
#ifdef HAVE_MPI
    int done = 0;
    if (started && (MPI_Finalized(&done), !done)) {
        fflush(stdout);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
    }
#endif
    started = 0;
}

void cli_mpi_barrier(void)
{
#ifdef HAVE_MPI
    if (started) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

void cli_mpi_bcast(void *buf, size_t n)
{
#ifdef HAVE_MPI
    if (started) MPI_Bcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
#else
    (void)buf, (void)n;
#endif
}

void cli_mpi_gather(const void *mine, size_t n, void *all)
{
#ifdef HAVE_MPI
    if (started) {
        MPI_Gather(mine, (int)n, MPI_BYTE, all, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
        return;
    }
#endif
    memcpy(all, mine, n);
}

void cli_mpi_allreduce_i64(int64_t *v, int n, cli_mpi_op_t op)
{
#ifdef HAVE_MPI
    if (started)
        MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, op == CLI_MPI_MIN ? MPI_MIN : op == CLI_MPI_MAX ? MPI_MAX : MPI_SUM,
                      MPI_COMM_WORLD);
#else
    (void)v, (void)n, (void)op;
#endif
}

void cli_mpi_allreduce_max(double *v, int n)
{
#ifdef HAVE_MPI
    if (started) MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#else
    (void)v, (void)n;
#endif
}

int cli_mpi_any(int mine)
{
    int64_t v = mine != 0;
    cli_mpi_allreduce_i64(&v, 1, CLI_MPI_MAX);
    return v != 0;
}

static int64_t isum_in[8], isum_out[8];
static int isum_n;
#ifdef HAVE_MPI
static MPI_Request isum_req;
#endif

void cli_mpi_isum_start(const int64_t *v, int n)
{
    isum_n = n < 8 ? n : 8;
    memcpy(isum_in, v, (size_t)isum_n * sizeof *v);
#ifdef HAVE_MPI
    if (started) {
        MPI_Iallreduce(isum_in, isum_out, isum_n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, &isum_req);
        return;
    }
#endif
    memcpy(isum_out, isum_in, sizeof isum_in);
}

int cli_mpi_isum_test(int64_t *out)
{
#ifdef HAVE_MPI
    if (started) {
        int done = 0;
        MPI_Test(&isum_req, &done, MPI_STATUS_IGNORE);
        if (!done) return 0;
    }
#endif
    memcpy(out, isum_out, (size_t)isum_n * sizeof *out);
    return 1;
}

int cli_mpi_agree(int rc, int own, int *who, char *msg, size_t cap)
{
    int64_t mine = rc != 0 && own ? (int64_t)rank : (int64_t)size, stopped = rc != 0;
    int64_t v[2] = {mine, stopped};
    cli_mpi_allreduce_i64(v, 1, CLI_MPI_MIN);
    cli_mpi_allreduce_i64(v + 1, 1, CLI_MPI_MAX);
    *who = v[0] < size ? (int)v[0] : -1;
    if (*who < 0) return v[1] ? RC_INTERRUPTED : RC_OK;
    int64_t status = rc;
#ifdef HAVE_MPI
    if (started) MPI_Bcast(&status, 1, MPI_INT64_T, *who, MPI_COMM_WORLD);
    if (started && msg && cap > 0) {
        MPI_Bcast(msg, (int)cap, MPI_CHAR, *who, MPI_COMM_WORLD);
        msg[cap - 1] = '\0';
    }
#else
    (void)msg, (void)cap;
#endif
    return (int)status;
}
