/* halo.c — a 1-D periodic halo exchange: ITERS steps of compute, then two MPI_Sendrecv (send
 * right / receive from left, then send left / receive from right) of HALO doubles. SMPI's TI
 * trace records each MPI_Sendrecv as one "sendRecv <sendcount> <dst> <recvcount> <src>
 * <sendtype> <recvtype>" action: the tag is not recorded. Under SMPI the compute is injected with
 * smpi_execute_flops (exact in the TI trace). Prints nothing.
 * Per rank: 2*ITERS sends and 2*ITERS receives of HALO*8 bytes. */
#include <mpi.h>

#define ITERS 4
#define HALO 64        /* doubles: 512 bytes */
#define WORK 1500000.0 /* flops per step: 1.5 ms at 1 Gflop/s */
#define TAG 11

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
	double mine[HALO], left[HALO], right[HALO];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 0; i < HALO; i++) mine[i] = rank * HALO + i;
	int r = (rank + 1) % size, l = (rank + size - 1) % size;
	for (int it = 0; it < ITERS; it++) {
		compute(WORK);
		MPI_Sendrecv(mine, HALO, MPI_DOUBLE, r, TAG, left, HALO, MPI_DOUBLE, l, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Sendrecv(mine, HALO, MPI_DOUBLE, l, TAG, right, HALO, MPI_DOUBLE, r, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		mine[0] = 0.5 * (left[HALO - 1] + right[0]);
	}
	MPI_Finalize();
	return 0;
}
