#pragma once
// A SQLite VFS shim that writes a commit's WAL frames with a few large writes instead of
// two writes per frame.
//
// SQLite appends a WAL frame as two writes: the 24-byte frame header, then the page right
// after it (wal.c, walWriteOneFrame); each is a pwrite() of its own, and the header's
// dirties a page-cache page that the page's write touches again. Under 1 KiB load that was
// much of the writer thread's time (docs/decisions/006-wal-frame-vfs-shim.md).
// This shim holds a run of writes that continue one another, starting with a frame
// header, and sends it as one write when the commit's last page arrives (the frame
// header's "database size" field is set only in a commit's last frame), or once the run
// reaches 48 KiB: a commit of 30 pages is 3 writes instead of 60.
//
// What SQLite sees does not change:
//  - every other call on the WAL (read, sync, size, truncate, close, file control, a write
//    that does not continue the run) first writes the run, so the file looks as if each
//    write had happened at once;
//  - a run ends at the latest with the write of the commit's last page, and that call
//    returns the run's error, so a failed write fails the commit as it would have;
//  - frames reach other connections only after SQLite publishes them (the wal-index
//    header), after the commit's writes returned. As a safety net, the memory barrier
//    SQLite makes on the database file right before publishing (xShmBarrier) writes any
//    run this thread still holds;
//  - no run outlives its write transaction: releasing the WAL's write lock (at a commit or
//    a rollback) writes what this thread holds, so a connection never leaves a run behind
//    for another thread (the holding thread is remembered per thread).
// Checksums SQLite rewrites in place after a commit (walRewriteChecksums) are small writes
// that do not continue the previous one: they go out at once.
//
// Files other than WALs pass straight through. Connection::open opens every connection
// through this VFS (store/sqlite/connection.cpp).
#include <cstdint>

namespace hh::sqlite {

inline constexpr int kMaxHeldBytes = 32;  // a small write that may start or join a run: a frame header (24)

// Registers the shim (once, thread-safe) over SQLite's default VFS and returns its name
// for sqlite3_open_v2; nullptr when registration failed (then the default VFS is used).
const char* frame_vfs_name();

// Small writes (frame headers) held and sent within a larger write, since the process
// started: each is a pwrite() saved (for tests).
uint64_t frame_vfs_writes_held();

}  // namespace hh::sqlite
