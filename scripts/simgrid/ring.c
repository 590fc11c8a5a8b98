/* ring.c — a token travels LAPS times around the ring of all ranks with blocking MPI_Send and
 * MPI_Recv; each rank computes WORK flops before passing it on. Deterministic: under SMPI the
 * compute is injected with smpi_execute_flops (exact flop counts in the TI trace); elsewhere a
 * loop of the same nominal size. Prints nothing.
 * Per rank: LAPS sends and LAPS receives of TOKEN doubles (TOKEN*8 bytes) each. */
#include <mpi.h>

#define LAPS 3
#define TOKEN 128      /* doubles: 1024 bytes */
#define WORK 1000000.0 /* flops per hop: 1 ms at 1 Gflop/s */
#define TAG 7

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
	double token[TOKEN];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 0; i < TOKEN; i++) token[i] = i;
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	for (int lap = 0; lap < LAPS; lap++) {
		if (rank == 0) {
			compute(WORK);
			MPI_Send(token, TOKEN, MPI_DOUBLE, next, TAG, MPI_COMM_WORLD);
			MPI_Recv(token, TOKEN, MPI_DOUBLE, prev, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(token, TOKEN, MPI_DOUBLE, prev, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			compute(WORK);
			MPI_Send(token, TOKEN, MPI_DOUBLE, next, TAG, MPI_COMM_WORLD);
		}
	}
	MPI_Finalize();
	return 0;
}
