#include <mpi.h>
int main(int argc, char **argv) {
  int rank, size; int a[64], b[256], cnt[8], dsp[8]; MPI_Request rq[2]; MPI_Status st;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 0; i < 8; i++) { cnt[i] = i + 1; dsp[i] = 8 * i; }
  for (int i = 0; i < 64; i++) a[i] = i;
  MPI_Bcast(a, 5, MPI_INT, 1, MPI_COMM_WORLD);
  MPI_Reduce(a, b, 3, MPI_DOUBLE, MPI_SUM, 2, MPI_COMM_WORLD);
  MPI_Allreduce(a, b, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Alltoall(a, 2, MPI_INT, b, 2, MPI_INT, MPI_COMM_WORLD);
  int sc[8], sd[8], rc[8], rd[8];
  for (int j = 0; j < size; j++) { sc[j] = rank + j + 1; sd[j] = 8 * j; rc[j] = j + rank + 1; rd[j] = 8 * j; }
  MPI_Alltoallv(a, sc, sd, MPI_INT, b, rc, rd, MPI_INT, MPI_COMM_WORLD);
  MPI_Gather(a, 4, MPI_SHORT, b, 4, MPI_SHORT, 0, MPI_COMM_WORLD);
  MPI_Gatherv(a, rank + 1, MPI_INT, b, cnt, dsp, MPI_INT, 1, MPI_COMM_WORLD);
  MPI_Scatter(a, 3, MPI_CHAR, b, 3, MPI_CHAR, 2, MPI_COMM_WORLD);
  MPI_Scatterv(a, cnt, dsp, MPI_INT, b, rank + 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Allgather(a, 2, MPI_FLOAT, b, 2, MPI_FLOAT, MPI_COMM_WORLD);
  MPI_Allgatherv(a, rank + 1, MPI_INT, b, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
  MPI_Reduce_scatter(a, b, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Scan(a, b, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Exscan(a, b, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Sendrecv(a, 3, MPI_INT, (rank + 1) % size, 5, b, 3, MPI_INT, (rank + size - 1) % size, 5, MPI_COMM_WORLD, &st);
  if (rank == 0) {
    MPI_Irecv(b, 2, MPI_INT, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, &rq[0]);
    MPI_Wait(&rq[0], &st);
    MPI_Irecv(b, 2, MPI_INT, 2, 9, MPI_COMM_WORLD, &rq[1]);
    int flag = 0; while (!flag) MPI_Test(&rq[1], &flag, &st);
  } else if (rank == 1) {
    MPI_Isend(a, 2, MPI_INT, 0, 8, MPI_COMM_WORLD, &rq[0]); MPI_Wait(&rq[0], &st);
  } else if (rank == 2) {
    MPI_Send(a, 2, MPI_INT, 0, 9, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize(); return 0;
}
