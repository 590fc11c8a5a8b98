// Package ti converts SimGrid SMPI time-independent (TI) traces into
// schedules (sim/workload/sched): per-rank Send, Recv and Calc operations
// with dependencies.
//
// # Input
//
// smpirun -trace-ti --cfg=tracing/filename:X writes an index file X listing
// one file per rank (non-empty lines, in rank order, relative to X's
// directory); ReadIndex reads it. With tracing/smpi/format/ti-one-file the
// index lists a single shared file holding every rank's lines; ReadIndex
// then reads that file as Read does, and Read reads such a file (or any
// stream of all ranks' actions) directly. Lines are "RANK ACTION ARGS…",
// fields separated by blanks or tabs; empty lines and lines starting with
// '#' are skipped, as SimGrid's replay does. Files are read line by line
// and converted as they are read (memory: the schedule), except by Read
// with Options.Ranks 0, which keeps the parsed numbers until the end of
// the trace tells the number of ranks. Schedule.File is the file given
// (the index for ReadIndex); an op's Line is its line in the file it was
// read from (for ReadIndex, its rank's file).
//
// # Grammar
//
// The grammar is SimGrid 3.32's (the version Debian ships): what the tracer
// prints (src/instr/instr_private.hpp, the TIData classes, filled in
// src/smpi/bindings/smpi_pmpi*.cpp) and what the replay accepts
// (src/smpi/internals/smpi_replay.cpp, the *Parser::parse methods).
// Brackets mark optional trailing fields; a missing datatype is the
// default one (MPI_BYTE, or MPI_DOUBLE after an "init" with an argument),
// a missing root is 0.
//
//	init [x]                          no op; an argument switches the default datatype to MPI_DOUBLE
//	finalize                          no op
//	compute FLOPS                     Calc of FLOPS / Options.FlopRate
//	sleep SECONDS                     Calc of SECONDS
//	location FILE LINE                no op (call-site annotation)
//	send|isend DST TAG COUNT [DT]     Send; isend is non-blocking
//	recv|irecv SRC TAG COUNT [DT]     Recv; irecv is non-blocking
//	send|isend|recv|irecv PEER COUNT  the older form (SimGrid ≤ 3.14): tag 0, default datatype
//	sendRecv SCOUNT DST RCOUNT SRC [SDT [RDT]]  Send (tag 0) and Recv (any tag) posted together
//	wait SRC DST TAG                  completes the oldest outstanding request with that key
//	wait                              the older form: completes the newest outstanding request
//	test SRC DST TAG                  no op (see below)
//	waitall [COUNT]                   completes every outstanding request
//	barrier
//	bcast COUNT [ROOT [DT]]
//	reduce COUNT COMP [ROOT [DT]]
//	allreduce|scan|exscan COUNT COMP [DT]
//	alltoall SCOUNT RCOUNT [SDT [RDT]]
//	alltoallv SSUM SCOUNT×n RSUM RCOUNT×n [SDT [RDT]]
//	gather|scatter SCOUNT RCOUNT [ROOT [SDT [RDT]]]
//	allgather SCOUNT RCOUNT [SDT [RDT]]
//	gatherv SCOUNT RCOUNT×n [ROOT [SDT [RDT]]]
//	allgatherv SCOUNT RCOUNT×n [SDT [RDT]]   (also with n displacements, as the replay reads them)
//	scatterv SCOUNT×n RCOUNT [ROOT [SDT [RDT]]]
//	reducescatter RCOUNT×n COMP [DT]
//	comm_size N                       must be the number of ranks
//	comm_split …, comm_dup …          no op
//
// COMP is the flops of the reduction, computed after the collective (a Calc,
// as the replay does). Any other action (e.g. the Ssend, ISsend, bsend,
// ibsend, Start, Startall, waitAny, testall and i-collectives the tracer
// can write, none of which SimGrid's replay accepts) is an error
// "FILE:LINE: unsupported action "x"".
//
// Peers are MPI_COMM_WORLD ranks. A receive from MPI_ANY_SOURCE is written
// as -333 (MPI_UNDEFINED, what the tracer's rank translation yields) or
// -555, MPI_ANY_TAG as -444; both become the schedule's wildcards. User
// tags must lie in [0, 2^30).
//
// # Datatypes
//
// DT is SimGrid's datatype code (Datatype::encode: the id given in
// CREATE_MPI_DATATYPE, src/smpi/mpi/smpi_datatype.cpp); Bytes = count ×
// size, with the sizes of the C types on LP64 Linux:
//
//	 0 DOUBLE 8       1 INT 4          2 CHAR 1         3 SHORT 2
//	 4 LONG 8         5 FLOAT 4        6 BYTE 1         7 LONG_LONG 8
//	 8 SIGNED_CHAR 1  9 UNSIGNED_CHAR 1  10 UNSIGNED_SHORT 2  11 UNSIGNED 4
//	12 UNSIGNED_LONG 8  13 UNSIGNED_LONG_LONG 8  14 LONG_DOUBLE 16  15 WCHAR 4
//	16 C_BOOL 1      17 INT8_T 1      18 INT16_T 2     19 INT32_T 4
//	20 INT64_T 8     21 UINT8_T 1     22 UINT16_T 2    23 UINT32_T 4
//	24 UINT64_T 8    25 C_FLOAT_COMPLEX 8  26 C_DOUBLE_COMPLEX 16
//	27 C_LONG_DOUBLE_COMPLEX 32  28 AINT 8  29 OFFSET 8
//	30 FLOAT_INT 8   31 LONG_INT 16   32 DOUBLE_INT 16  33 SHORT_INT 8
//	34 2INT 8        35 2FLOAT 8      36 2DOUBLE 16    37 2LONG 16
//	38 REAL 4        39 REAL4 4       40 REAL8 8       41 REAL16 16
//	42 COMPLEX8 8    43 COMPLEX16 16  44 COMPLEX32 16 (SimGrid's size)
//	45 INTEGER1 4 (SimGrid's size)    46 INTEGER2 2    47 INTEGER4 4
//	48 INTEGER8 8    49 INTEGER16 16  50 LONG_DOUBLE_INT 32  51 CXX_BOOL 1
//	52 CXX_FLOAT_COMPLEX 8  53 CXX_DOUBLE_COMPLEX 16  54 CXX_LONG_DOUBLE_COMPLEX 32
//	55 UB 0          56 LB 0          57 PACKED 1      58 PTR 8   59 COUNT 8
//
// Derived datatypes are written as -1 (MPI_DATATYPE_NULL's id: their size
// is lost); they, and any other code, are an error naming the code.
//
// # Dependencies
//
// Each rank's actions are sequential. The front is the set of ops the next
// op requires (completion): a blocking op (send, recv, compute, sleep, each
// step of a collective) requires the front and becomes it; isend and irecv
// require the front, are NonBlocking and become outstanding requests
// without changing the front. Every op also irequires (Dep.Start) the op
// posted just before it when that op is not in the front, so that ops start
// in program order (MPI's matching order). wait adds the request it
// completes to the front, waitall all outstanding ones: the op after them
// requires them. This follows SimGrid's replay: wait SRC DST TAG pops the
// oldest request keyed (SRC, DST, TAG) (RequestStorage::pop); with none it
// does nothing (the replay assumes an earlier test completed it), and a
// wait with no outstanding request at all is an error; waitall waits for
// every outstanding request of the rank whatever its count; test leaves the
// request outstanding (whether it succeeds depends on timing; the replay
// puts it back too). Requests still outstanding at the end complete on
// their own. Calcs that round to 0 ps are dropped; Time = seconds × 10^12
// rounded to the nearest ps.
//
// # Collectives
//
// TI traces do not name a collective's communicator: SimGrid's replay runs
// every collective on MPI_COMM_WORLD, and so does this package. Every rank
// must reach the same sequence of collectives with the same root and, for
// bcast, reduce, allreduce, scan and exscan, the same size; a mismatch is
// an error naming the rank, the line and the first rank's line. Collective
// number k of the run (k = 0, 1, …) uses tag CollTagBase + k mod 2^30,
// above every user tag. Each collective expands into point-to-point steps;
// a step's ops are posted together and require the previous step, so
// within a collective a rank's ops form a chain of steps. Ours, with SMPI
// 3.32's default ("default" selector, src/smpi/colls/smpi_default_selector.cpp)
// for comparison:
//
//   - barrier, allreduce: recursive doubling among the largest power of two
//     p ≤ n; rank p+i first sends to i (fold-in) and receives the result
//     from it at the end. Barrier messages are 0 bytes, allreduce's the
//     whole vector. SMPI: barrier ompi_basic_linear, allreduce reduce to 0
//     then bcast (ompi for non-commutative ops).
//   - bcast: binomial tree from the root, sends largest subtree first, one
//     after the other (SMPI: binomial_tree too).
//   - reduce: binomial tree towards the root, children received one after
//     the other (SMPI: linear, nonblocking).
//   - alltoall, alltoallv: pairwise exchange, step k = 1…n−1 sends to r+k and
//     receives from r−k (SMPI: ompi's size-based choice / linear nonblocking).
//     Zero-count blocks are still sent (0 bytes).
//   - gather(v), scatter(v): linear, all messages to or from the root posted
//     together (SMPI: linear too).
//   - allgather(v): ring, step k sends block r−k to r+1 and receives block
//     r−k−1 from r−1; block j is rank j's receive count (SMPI: linear,
//     nonblocking).
//   - reducescatter: binomial reduce of the whole vector to rank 0, then
//     linear scatterv of the blocks (SMPI: mpich's for commutative ops,
//     reduce + scatterv otherwise).
//   - scan, exscan: chain, rank r receives from r−1 then sends to r+1
//     (SMPI: ompi linear).
//
// Limits: collectives on sub-communicators cannot be told apart from
// MPI_COMM_WORLD's (a "comm_size" other than the number of ranks is an
// error; a sequence that differs between ranks is caught, identical
// sequences on disjoint sub-communicators are not). A user receive with
// MPI_ANY_TAG could match a collective message from the same peer (the
// schedule has no communicator contexts).
package ti
