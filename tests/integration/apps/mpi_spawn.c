/* An MPI program for the MPI_Comm_spawn tests of `sched run --mpi=pmix`
 * (issue 16 item 2; built with mpicc.openmpi, tests/CMakeLists.txt).
 *
 *   mpi_spawn HOSTS N [hang PIDFILE | die R]
 *     the step's ranks spawn N children of this program with the info key
 *     "host" = HOSTS ("-": none), merge the intercommunicator with them and
 *     reduce the merged ranks; every process prints
 *       "parent|child rank R merged M sum X node NODE parent P"
 *     (NODE: the name of the node it runs on, from SCHED_JOB_NODELIST and
 *     SCHED_NODEID; P: whether MPI_Comm_get_parent gave a communicator). A refused spawn
 *     prints "spawn failed: <MPI's error string>" on rank 0 and ends well.
 *     With hang, every process appends its pid to PIDFILE after the reduce
 *     and sleeps until killed. With die R, child R exits with status 7
 *     after the reduce, without MPI_Finalize. With SPAWN_TIMING in the environment, rank 0
 *     also prints "spawn_ms T": the wall time of its MPI_Comm_spawn (launch,
 *     the children's MPI_Init, publish/lookup and connect), for bench/mpi. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char* env_or(const char* name, const char* fallback) {
  const char* value = getenv(name);
  return value ? value : fallback;
}

/* This node's name: entry SCHED_NODEID of SCHED_JOB_NODELIST. */
static void node_name(char* out, size_t size) {
  snprintf(out, size, "?");
  const char* list = getenv("SCHED_JOB_NODELIST");
  const char* id = getenv("SCHED_NODEID");
  if (!list || !id) return;
  for (int index = atoi(id); index > 0 && list; --index) {
    list = strchr(list, ',');
    if (list) ++list;
  }
  if (!list) return;
  const size_t length = strcspn(list, ",");
  snprintf(out, size, "%.*s", (int)length, list);
}

static void merge_and_reduce(MPI_Comm inter, int high, const char* who, int argc, char** argv,
                             int first_extra) {
  MPI_Comm merged;
  int rank = -1, size = -1, sum = -1;
  MPI_Intercomm_merge(inter, high, &merged);
  MPI_Comm_rank(merged, &rank);
  MPI_Comm_size(merged, &size);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged);
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  char node[64];
  node_name(node, sizeof node);
  printf("%s rank %d merged %d sum %d node %s parent %d\n", who, rank, size, sum, node,
         parent != MPI_COMM_NULL);
  fflush(stdout);
  int world = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  if (argc > first_extra + 1 && strcmp(argv[first_extra], "die") == 0 &&
      strcmp(who, "child") == 0 && world == atoi(argv[first_extra + 1])) {
    _exit(7); /* without MPI_Finalize: its step, and its parents', fail */
  }
  if (argc > first_extra + 1 && strcmp(argv[first_extra], "hang") == 0) {
    FILE* pids = fopen(argv[first_extra + 1], "a");
    if (pids) {
      fprintf(pids, "%d\n", (int)getpid());
      fclose(pids);
    }
    sleep(600);
  }
  MPI_Comm_free(&merged);
  MPI_Comm_disconnect(&inter);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  if (parent != MPI_COMM_NULL) {
    /* A child: argv is "child [hang PIDFILE]". */
    merge_and_reduce(parent, 1, "child", argc, argv, 2);
    MPI_Finalize();
    return 0;
  }
  if (argc < 3) {
    fprintf(stderr, "usage: mpi_spawn HOSTS N [hang PIDFILE]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Info info;
  MPI_Info_create(&info);
  if (strcmp(argv[1], "-") != 0) MPI_Info_set(info, "host", argv[1]);
  char* child_argv[4] = {"child", NULL, NULL, NULL};
  if (argc > 4) {
    child_argv[1] = argv[3];
    child_argv[2] = argv[4];
  }
  MPI_Comm inter;
  int errcodes[64];
  const int n = atoi(argv[2]);
  const double t0 = MPI_Wtime();
  const int rc = MPI_Comm_spawn(argv[0], child_argv, n, info, 0, MPI_COMM_WORLD, &inter,
                                n <= 64 ? errcodes : MPI_ERRCODES_IGNORE);
  const double spawn_s = MPI_Wtime() - t0;
  MPI_Info_free(&info);
  if (rc == MPI_SUCCESS && rank == 0 && getenv("SPAWN_TIMING")) {
    printf("spawn_ms %.1f\n", spawn_s * 1000);
    fflush(stdout);
  }
  if (rc != MPI_SUCCESS) {
    if (rank == 0) {
      char text[MPI_MAX_ERROR_STRING];
      int length = 0;
      MPI_Error_string(rc, text, &length);
      printf("spawn failed: %s\n", text);
      fflush(stdout);
    }
    MPI_Finalize();
    return 0;
  }
  merge_and_reduce(inter, 0, "parent", argc, argv, 3);
  MPI_Finalize();
  return 0;
}
