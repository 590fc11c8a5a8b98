/* nonblocking.c — ITERS steps of: MPI_Irecv from both ring neighbours, MPI_Isend to both,
 * compute (overlapping the transfers), MPI_Waitall on the four requests. Under SMPI the compute
 * is injected with smpi_execute_flops (exact in the TI trace). Prints nothing.
 * Per rank: 2*ITERS sends and 2*ITERS receives of COUNT*8 bytes. */
#include <mpi.h>

#define ITERS 3
#define COUNT 256      /* doubles: 2048 bytes */
#define WORK 1000000.0 /* flops per step: 1 ms at 1 Gflop/s */
#define TAG 5

static double sink;

static void compute(double flops) {
#ifdef SMPI_SAMPLE_FLOPS
	smpi_execute_flops(flops);
#else
	for (long i = 0; i < (long)flops; i++) sink += 1e-9 * (double)i;
#endif
}

int main(int argc, char **argv) {
	int rank, size;
	double out[COUNT], fromL[COUNT], fromR[COUNT];
	MPI_Request rq[4];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 0; i < COUNT; i++) out[i] = rank + i;
	int r = (rank + 1) % size, l = (rank + size - 1) % size;
	for (int it = 0; it < ITERS; it++) {
		MPI_Irecv(fromL, COUNT, MPI_DOUBLE, l, TAG, MPI_COMM_WORLD, &rq[0]);
		MPI_Irecv(fromR, COUNT, MPI_DOUBLE, r, TAG, MPI_COMM_WORLD, &rq[1]);
		MPI_Isend(out, COUNT, MPI_DOUBLE, r, TAG, MPI_COMM_WORLD, &rq[2]);
		MPI_Isend(out, COUNT, MPI_DOUBLE, l, TAG, MPI_COMM_WORLD, &rq[3]);
		compute(WORK);
		MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
		out[0] = fromL[0] + fromR[0];
	}
	MPI_Finalize();
	return 0;
}
