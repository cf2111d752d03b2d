#pragma once
// A SQLite VFS shim that writes each WAL frame with one write instead of two.
//
// SQLite appends a WAL frame as two writes: the 24-byte frame header, then the page right
// after it (wal.c, walWriteOneFrame). Each is a pwrite() of its own, and the header one
// also dirties a page-cache page the page write touches again. The writer thread spent
// 40 % of its time in pwrite() under 1 KiB load (perf, bench/README.md "Measured"), half of
// those calls for 24 bytes. This shim holds a small write (at most kMaxHeldBytes) that
// starts exactly where the previous write through the same handle ended, and sends it
// together with the next write when that one continues it: header and page in one call.
//
// Nothing else changes: every other call on the file (read, sync, size, truncate, close,
// file control, a write elsewhere) first writes what is held, so SQLite sees the file as
// if each write had happened at once; a held write's error is returned by that call.
// A held write never outlives the commit that made it: SQLite publishes a commit to other
// connections (the wal-index header) only after a memory barrier on the database file,
// xShmBarrier, which first writes what this thread holds. A frame header is always
// followed by its page in practice (the rewrite of checksums writes headers alone, but
// never right after its previous write, so they are not held), so that is a safety net.
// SQLite's other modes that skip the barrier (locking_mode=EXCLUSIVE without shared
// memory) are not used by healthhook.
//
// Files other than WALs pass straight through. Connection::open uses this VFS for every
// connection (store/sqlite/connection.cpp).
#include <cstdint>

namespace hh::sqlite {

inline constexpr int kMaxHeldBytes = 32;  // a frame header (24) or the WAL header (32)

// Registers the shim (once, thread-safe) over SQLite's default VFS and returns its name
// for sqlite3_open_v2; nullptr when registration failed (then the default VFS is used).
const char* frame_vfs_name();

// Writes that went out joined with a held header, since the process started (for tests).
uint64_t frame_vfs_joined_writes();

}  // namespace hh::sqlite
