/* The Monte-Carlo pi of examples/pi/pi.c as a rigid MPI program (issue 16
 * item 4). The samples are drawn in chunks; each chunk is cut into blocks,
 * each from its own stream seeded from (seed, chunk, block) exactly as pi.c
 * seeds them, and the blocks are shared out among the ranks; an
 * MPI_Reduce per chunk sums the hits. The estimate is thus the same on any
 * number of ranks, and the same as pi.c's: compare the --out files.
 *
 *   pi_mpi [--samples N] [--chunks C] [--blocks B] [--seed S] [--out FILE]
 *
 * Run it with `sched run -n 8 --mpi=pmi2 pi_mpi` (MPICH) or with mpirun in a
 * batch script (examples/jobs/pi_mpi.sh). Rigid: only the heat solver has a
 * malleable MPI build (heat_mpi_malleable.c). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint64_t samples, chunks, blocks, seed;
  const char* out;
} options;

static options opt;

static uint64_t parse_u64(const char* flag, const char* text, uint64_t min) {
  char* end = NULL;
  const unsigned long long v = text ? strtoull(text, &end, 10) : 0;
  if (!text || *text == '-' || *end != '\0' || v < min) {
    fprintf(stderr, "pi_mpi: %s needs a number >= %llu\n", flag, (unsigned long long)min);
    exit(2);
  }
  return (uint64_t)v;
}

static void parse_options(int argc, char** argv) {
  opt = (options){100000000u, 100, 64, 42, NULL};
  const struct {
    const char* name;
    uint64_t* value;
    uint64_t min;
  } flags[] = {{"--samples", &opt.samples, 1},
               {"--chunks", &opt.chunks, 1},
               {"--blocks", &opt.blocks, 1},
               {"--seed", &opt.seed, 0}};
  int ok = argc % 2 == 1; /* flags come in pairs */
  for (int i = 1; ok && i + 1 < argc; i += 2) {
    ok = strcmp(argv[i], "--out") == 0;
    if (ok) opt.out = argv[i + 1];
    for (size_t f = 0; f < sizeof flags / sizeof flags[0] && !ok; ++f) {
      ok = strcmp(argv[i], flags[f].name) == 0;
      if (ok) *flags[f].value = parse_u64(argv[i], argv[i + 1], flags[f].min);
    }
  }
  if (!ok) {
    fprintf(stderr,
            "usage: pi_mpi [--samples N] [--chunks C] [--blocks B] [--seed S] [--out FILE]\n");
    exit(2);
  }
}

/* Part k of n things cut into p parts (as in pi.c). */
static uint64_t part_begin(uint64_t n, uint64_t p, uint64_t k) {
  return k * (n / p) + (k < n % p ? k : n % p);
}
static uint64_t part_size(uint64_t n, uint64_t p, uint64_t k) { return n / p + (k < n % p); }

/* SplitMix64, and a block's stream from (seed, chunk, block), as pi.c has them. */
static uint64_t splitmix64(uint64_t* x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static double unit(uint64_t* x) { return (double)(splitmix64(x) >> 11) * 0x1.0p-53; }

static uint64_t draw_block(uint64_t chunk, uint64_t block, uint64_t n) {
  uint64_t x = opt.seed;
  x ^= splitmix64(&x) + chunk * 0xd1b54a32d192ed03u + block * 0x8cb92ba72f3d8dd7u;
  uint64_t hits = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const double px = unit(&x), py = unit(&x);
    hits += px * px + py * py < 1.0;
  }
  return hits;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  parse_options(argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double started = MPI_Wtime();
  const uint64_t b0 = part_begin(opt.blocks, (uint64_t)size, (uint64_t)rank);
  const uint64_t nb = part_size(opt.blocks, (uint64_t)size, (uint64_t)rank);
  uint64_t hits = 0, drawn = 0;
  for (uint64_t chunk = 0; chunk < opt.chunks; ++chunk) {
    const uint64_t n = part_size(opt.samples, opt.chunks, chunk);
    uint64_t mine = 0, all = 0;
    for (uint64_t b = b0; b < b0 + nb; ++b)
      mine += draw_block(chunk, b, part_size(n, opt.blocks, b));
    MPI_Reduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    hits += all;
    drawn += n;
  }
  int status = 0;
  if (rank == 0) {
    const double estimate = 4.0 * (double)hits / (double)drawn;
    printf(
        "pi_mpi: estimate %.17g from %llu samples (%llu inside) in %llu chunks, %d ranks, "
        "error %.3g, %.2f s\n",
        estimate, (unsigned long long)drawn, (unsigned long long)hits,
        (unsigned long long)opt.chunks, size, estimate - 3.14159265358979323846,
        MPI_Wtime() - started);
    if (opt.out) {
      FILE* f = fopen(opt.out, "w");
      if (f)
        fprintf(f, "%llu %llu %.17g\n", (unsigned long long)drawn, (unsigned long long)hits,
                estimate);
      if (!f || fclose(f) != 0) {
        fprintf(stderr, "pi_mpi: cannot write %s\n", opt.out);
        status = 1;
      }
    }
  }
  MPI_Finalize();
  return status;
}
