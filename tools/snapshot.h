/*
 * snapshot.h -- `cuwarden-audit snapshot PID`: a running process under
 * the shim asked for a snapshot (doc/audit.md, "Snapshots and diff";
 * snapshot.c).
 */
#ifndef CUWARDEN_TOOLS_SNAPSHOT_H
#define CUWARDEN_TOOLS_SNAPSHOT_H

/* The default of --wait, in seconds. */
#define SNAPSHOT_WAIT_S 10

/* Asks process pid for a snapshot: reads its CUWARDEN_CONTROL,
 * CUWARDEN_SNAPSHOT_SIGNAL and CUWARDEN_REPORT from /proc/PID/environ,
 * writes "snapshot" to the control FIFO when it has one, else checks that
 * it catches the signal (the shim's handler is there) and sends it, and
 * waits at most
 * wait_s seconds for a new "<CUWARDEN_REPORT>.snap.*" file.  Returns 0
 * with *path (newly allocated) the snapshot's file -- NULL when the
 * process's snapshots go to its standard error -- and *json whether it
 * is JSON (CUWARDEN_REPORT_FORMAT); or AU_EXIT_AUDIT_FAILED after a
 * message saying why (no such process, not ours, no shim, the options
 * unset or refused, no handler, a FIFO nobody reads, no file in time). */
int snapshot_take(long pid, long wait_s, char **path, bool *json);

#endif /* CUWARDEN_TOOLS_SNAPSHOT_H */
