#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  int rank, size, token = 0; double buf[64]; MPI_Request rq[2];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 0; i < 2; i++) {
    if (rank == 0) { MPI_Send(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD); MPI_Recv(&token, 1, MPI_INT, size-1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
    else { MPI_Recv(&token, 1, MPI_INT, rank-1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Send(&token, 1, MPI_INT, (rank+1)%size, 7, MPI_COMM_WORLD); }
  }
  MPI_Irecv(buf, 64, MPI_DOUBLE, (rank+size-1)%size, 1, MPI_COMM_WORLD, &rq[0]);
  MPI_Isend(buf, 64, MPI_DOUBLE, (rank+1)%size, 1, MPI_COMM_WORLD, &rq[1]);
  MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
  double x = 1, y = 0; for (int i = 0; i < 1000000; i++) y += x * i;
  MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Bcast(buf, 64, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Finalize(); return (int)y & 0;
}
