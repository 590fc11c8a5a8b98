/* allreduce.c — ITERS rounds of compute then MPI_Allreduce (sum) of COUNT doubles. Odd ranks
 * compute twice as much as even ones, so the critical path is the odd ranks' compute. Under SMPI
 * the compute is injected with smpi_execute_flops (exact in the TI trace). Prints nothing.
 * COUNT*8 = 128 bytes: below every small-message threshold, so the allreduce is expanded by
 * recursive doubling (log2(p) exchanges of the whole vector per rank and round, p a power of 2). */
#include <mpi.h>

#define ITERS 5
#define COUNT 16       /* doubles: 128 bytes */
#define WORK 2000000.0 /* flops per round on even ranks (2 ms at 1 Gflop/s); odd ranks 2×WORK */

static double sink;

static void compute(double flops) {
#ifdef SMPI_SAMPLE_FLOPS
	smpi_execute_flops(flops);
#else
	for (long i = 0; i < (long)flops; i++) sink += 1e-9 * (double)i;
#endif
}

int main(int argc, char **argv) {
	int rank;
	double in[COUNT], out[COUNT];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int i = 0; i < COUNT; i++) in[i] = rank + i;
	for (int it = 0; it < ITERS; it++) {
		compute(rank % 2 ? 2 * WORK : WORK);
		MPI_Allreduce(in, out, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		in[0] = out[0] * 1e-3;
	}
	MPI_Finalize();
	return 0;
}
