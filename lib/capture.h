/*
 * capture.h -- the stream captures in progress in this process, and what
 * the driver forbids while they are.
 *
 * The shim's hooks of cuStreamBeginCapture* and cuStreamEndCapture* keep
 * a table of the captures in progress (stream, mode, capturing thread),
 * and its hook of cuThreadExchangeStreamCaptureMode each thread's
 * interaction mode.  From them:
 *
 *  - capture_forbids(): the driver's rule for "potentially unsafe" calls
 *    (cuda.h, cuThreadExchangeStreamCaptureMode): a thread whose mode is
 *    not relaxed may not make them while it has a capture of its own
 *    begun in another mode than relaxed, nor, in global mode, while
 *    another thread has a capture begun in global mode.  Measured on the
 *    H200 (tests/fakecuda/probe.c, part capture): cuMemAlloc, cuMemFree,
 *    cuEventQuery are such calls; the driver refuses them with
 *    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the capture.
 *  - the barrier gate: cuCtxSynchronize during any capture of the
 *    context, from any thread in any mode, is refused and breaks the
 *    capture (H200).  The fence takes a barrier only between
 *    capture_barrier_enter() returning true and capture_barrier_leave();
 *    capture_begin() waits for a barrier in flight before the capture
 *    starts, so that none can overlap one.
 *
 * Captures are process-wide here (not per context): while any is in
 * progress no barrier is taken on any device.  The library without the
 * shim sees no capture (nothing tells it).  Owner: shim; read by the
 * fence and the pools.
 */
#ifndef CUWARDEN_CAPTURE_H
#define CUWARDEN_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>

/* Before the driver's cuStreamBeginCapture*: a capture of stream s in
 * mode (CUstreamCaptureMode) is starting on this thread.  Waits until no
 * barrier is in flight; none starts until the capture is over. */
void capture_begin(CUstream s, int mode);
/* The capture of s is over (the driver says the stream is not capturing
 * any more after cuStreamEndCapture), or never began (the driver refused
 * the begin): undoes capture_begin. */
void capture_end(CUstream s);

/* Whether any capture is in progress: one atomic load. */
bool capture_active(void);
/* Captures in progress, and how many have begun since the start. */
unsigned capture_count(void);
uint64_t capture_begun(void);
/* Whether the driver forbids this thread's potentially unsafe calls now
 * (the rule above).  False, at one atomic load, with no capture. */
bool capture_forbids(void);

/* This thread's capture interaction mode as the program set it
 * (CU_STREAM_CAPTURE_MODE_GLOBAL until it exchanges another). */
int capture_thread_mode(void);
void capture_set_thread_mode(int mode);

/* The barrier gate (fence.c). */
bool capture_barrier_enter(void);
void capture_barrier_leave(void);

/* Around driver calls the library makes on a program's thread while a
 * capture may be in progress (segments of the pools): the thread's mode
 * is relaxed in between, as PyTorch's caching allocator does around its
 * cudaMalloc, so that the call breaks no capture.  Returns what
 * capture_unrelax takes; cheap (no driver call) with no capture. */
int capture_relax(void);
void capture_unrelax(int saved);

/* Tests: no capture, every mode global. */
void capture_reset(void);
/* Fork hooks (fork.c): the table's lock; the child forgets every capture
 * (capture_reset: they belonged to the parent's threads). */
void capture_prefork(void);
void capture_postfork_parent(void);
void capture_postfork_child(void);

#endif /* CUWARDEN_CAPTURE_H */
