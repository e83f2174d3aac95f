// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf: RDMA WRITE bandwidth and latency over MRC, after perftest's
 * ib_write_bw.
 *
 *   mrc-perf server [--port P] [--once] [--json] [--pin-dir DIR] [--timeline FILE]
 *                   [--cc-profile N]
 *   mrc-perf client HOST [--size BYTES | --sweep MIN:MAX] [--cc-profile N]
 *                   [--cc-timeline FILE] [options]
 *
 * The server owns a zero-filled region per QP. The client WRITEs (or
 * WRITE-IMMs) into it through one libmrc QP (or --qps N of them, over one
 * server or several, HOST,HOST,...: multi.c), keeping `depth` WRITEs outstanding, size
 * after size, and times every WRITE from post to completion. With --verify
 * the server checksums what landed; with --imm it checks that the
 * immediates arrive one by one, in order, with the right lengths. The two
 * sides meet on a TCP control connection that carries a small fixed-size
 * protocol of our own and, once, libmrc's mrc_conn_exchange():
 *
 *   client                              server
 *   HELLO {region size, n_qps,       ->  allocates n_qps regions, a CQ and
 *          depth, imm, QP tuning,        n_qps QPs, posts receives for
 *          timeout}                      immediates
 *                                    <-  HELLO_ACK            (or ERROR)
 *   mrc_conn_exchange() per QP       <-> mrc_conn_exchange() per QP; the
 *                                        QPs go RESET->INIT->RTR->RTS
 *   for each size:
 *     BEGIN {size, first op, ops}    ->  remembers the size of those ops
 *                                    <-  BEGIN_ACK (the server QP is RTS)
 *     ... WRITEs over MRC ...
 *     VERIFY {offset, length,        ->  (--verify) checksums that range
 *             source's checksum}         of every region
 *                                    <-  VERIFY_ACK {QP 0's checksum,
 *                                        regions that match, imm count}
 *   DONE {ops posted}                ->  waits for that many immediates
 *                                    <-  DONE_ACK {imm count, in order}
 *   close                                session over (the server serves
 *                                        many sessions at once)
 *   ABORT {reason}                   ->  (client failure) session over
 *                                    <-  ERROR {reason} (server failure)
 *
 * Every message is CTL_MSG_LEN bytes in network byte order and starts with
 * a magic and a version, so a stranger or an older peer gets a clear error
 * instead of a misread number.
 *
 * libmrc only makes progress inside mrc_poll_cq() (sending, placing data,
 * SACKs, retransmission timers), so neither side ever sleeps while a QP
 * exists: a wait for a control message is a busy loop that polls the CQ
 * and peeks at the socket with MSG_DONTWAIT. Every wait has a deadline.
 *
 * Exit status: 0 success, 1 run-time failure, 2 usage error.
 *
 * This file: signal handling and the choice of role. perf.h lists the
 * other files and what each does.
 */
#include "perf.h"

#include <string.h>

volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/*
 * No SA_RESTART: a signal interrupts poll() and accept() so the loops see
 * stop_requested at once. SIGPIPE is ignored because a peer that vanishes
 * is an error to report, not a reason to die.
 */
static void install_signal_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int main(int argc, char **argv)
{
	struct opts o;

	parse_args(argc, argv, &o);
	install_signal_handlers();
	return o.server ? run_server(&o) : run_client(&o);
}
