#include "store/sqlite/frame_vfs.h"

#include <sqlite3.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "common/log.h"

// The shape of a pass-through VFS follows SQLite's own example shim, ext/misc/vfstrace.c:
// our file object first, the wrapped VFS's file object right after it, every method
// forwarded to it.
namespace hh::sqlite {
namespace {

// A WAL frame header is 24 bytes; bytes 4-7 (the database size after a commit) are not
// zero only in the last frame of a commit (wal.c, "WAL FRAME FORMAT").
constexpr int kFrameHeaderBytes = 24;
// The unix VFS writes at most 128 KiB - 1 bytes in one call (seekAndWriteFd masks the size
// with 0x1ffff; a larger write fails as SQLITE_FULL). A run goes out once it reaches
// kRunFlushBytes, so with a page of up to 64 KiB it stays below kRunMaxBytes.
constexpr size_t kRunFlushBytes = size_t{48} << 10;
constexpr size_t kRunMaxBytes = size_t{120} << 10;

sqlite3_vfs* g_root = nullptr;  // the wrapped VFS (SQLite's default)
sqlite3_vfs g_vfs{};
std::atomic<uint64_t> g_writes_held{0};

struct ShimFile {
  sqlite3_file base;   // first: what SQLite holds
  sqlite3_file* real;  // the wrapped VFS's file, in the same allocation right after this object
  bool wal;
  // WAL files only; used by one thread at a time, as the connection is:
  int64_t last_write_end = -1;     // where the previous write through this handle ended
  int64_t run_offset = 0;          // where the held run starts
  std::vector<unsigned char> run;  // held writes, each continuing the one before
  bool run_ends_commit = false;    // the last frame header in the run marks a commit's end
};

// The WAL file whose run this thread holds, if any: xShmBarrier, called on the database
// file (which knows nothing of its WAL), writes it out.
thread_local ShimFile* t_holding = nullptr;

ShimFile* shim(sqlite3_file* file) { return reinterpret_cast<ShimFile*>(file); }
sqlite3_file* real(sqlite3_file* file) { return shim(file)->real; }

int write_run(ShimFile* f) {
  if (f->run.empty()) return SQLITE_OK;
  const int rc = f->real->pMethods->xWrite(f->real, f->run.data(), static_cast<int>(f->run.size()), f->run_offset);
  f->run.clear();
  f->run_ends_commit = false;
  if (t_holding == f) t_holding = nullptr;
  if (rc != SQLITE_OK) f->last_write_end = -1;
  return rc;
}

// Every call but a write (and the pure queries) sees the file with the run in it.
int settle(sqlite3_file* file) { return shim(file)->wal ? write_run(shim(file)) : SQLITE_OK; }

int shim_close(sqlite3_file* file) {
  ShimFile* f = shim(file);
  const int held = settle(file);
  const int rc = f->real->pMethods ? f->real->pMethods->xClose(f->real) : SQLITE_OK;
  f->~ShimFile();
  return held != SQLITE_OK ? held : rc;
}

int shim_read(sqlite3_file* file, void* out, int amount, sqlite3_int64 offset) {
  if (const int rc = settle(file); rc != SQLITE_OK) return rc;
  return real(file)->pMethods->xRead(real(file), out, amount, offset);
}

int write_through(ShimFile* f, const void* data, int amount, sqlite3_int64 offset) {
  const int rc = f->real->pMethods->xWrite(f->real, data, amount, offset);
  f->last_write_end = rc == SQLITE_OK ? offset + amount : -1;
  return rc;
}

int shim_write(sqlite3_file* file, const void* data, int amount, sqlite3_int64 offset) {
  ShimFile* f = shim(file);
  if (!f->wal) return f->real->pMethods->xWrite(f->real, data, amount, offset);
  const bool small = amount <= kMaxHeldBytes;
  // A write that does not continue the run (or would make it too long) sends the run first.
  if (!f->run.empty() && (offset != f->run_offset + static_cast<int64_t>(f->run.size()) ||
                          f->run.size() + static_cast<size_t>(amount) > kRunMaxBytes)) {
    if (const int rc = write_run(f); rc != SQLITE_OK) return rc;
  }
  if (f->run.empty()) {
    // A run starts with a small write that continues the previous write (a frame
    // header); small writes elsewhere (checksums SQLite rewrites) and pages go out at once.
    if (!small || offset != f->last_write_end || (t_holding != nullptr && t_holding != f)) {
      return write_through(f, data, amount, offset);
    }
    f->run_offset = offset;
    t_holding = f;
  }
  const auto* bytes = static_cast<const unsigned char*>(data);
  f->run.insert(f->run.end(), bytes, bytes + amount);
  f->last_write_end = offset + amount;
  if (small) {
    g_writes_held.fetch_add(1, std::memory_order_relaxed);
    if (amount == kFrameHeaderBytes) f->run_ends_commit = (bytes[4] | bytes[5] | bytes[6] | bytes[7]) != 0;
    return SQLITE_OK;
  }
  // The page of a commit's last frame: the commit's frames go out now, and an error is
  // SQLite's to see, from this call.
  if (f->run_ends_commit || f->run.size() >= kRunFlushBytes) return write_run(f);
  return SQLITE_OK;
}

int shim_truncate(sqlite3_file* file, sqlite3_int64 size) {
  if (const int rc = settle(file); rc != SQLITE_OK) return rc;
  shim(file)->last_write_end = -1;
  return real(file)->pMethods->xTruncate(real(file), size);
}

int shim_sync(sqlite3_file* file, int flags) {
  if (const int rc = settle(file); rc != SQLITE_OK) return rc;
  return real(file)->pMethods->xSync(real(file), flags);
}

int shim_file_size(sqlite3_file* file, sqlite3_int64* size) {
  if (const int rc = settle(file); rc != SQLITE_OK) return rc;
  return real(file)->pMethods->xFileSize(real(file), size);
}

int shim_lock(sqlite3_file* file, int level) { return real(file)->pMethods->xLock(real(file), level); }
int shim_unlock(sqlite3_file* file, int level) { return real(file)->pMethods->xUnlock(real(file), level); }
int shim_check_reserved_lock(sqlite3_file* file, int* out) {
  return real(file)->pMethods->xCheckReservedLock(real(file), out);
}

int shim_file_control(sqlite3_file* file, int op, void* arg) {
  if (const int rc = settle(file); rc != SQLITE_OK) return rc;
  return real(file)->pMethods->xFileControl(real(file), op, arg);
}

int shim_sector_size(sqlite3_file* file) { return real(file)->pMethods->xSectorSize(real(file)); }
int shim_device_characteristics(sqlite3_file* file) {
  return real(file)->pMethods->xDeviceCharacteristics(real(file));
}

// The unix VFS's files have every method (version 3); the checks keep a VFS with fewer
// from being called through a null pointer.
bool has(sqlite3_file* file, int version) { return real(file)->pMethods->iVersion >= version; }

int shim_shm_map(sqlite3_file* file, int region, int size, int extend, void volatile** out) {
  if (!has(file, 2)) return SQLITE_IOERR_SHMMAP;
  return real(file)->pMethods->xShmMap(real(file), region, size, extend, out);
}
int shim_shm_lock(sqlite3_file* file, int offset, int n, int flags) {
  // A run never outlives the write transaction that made it: SQLite releases the WAL's
  // write lock at each commit (whose run is out by then) and each rollback, which may leave
  // frames held (pages written before the end of a transaction larger than the cache).
  // Those frames are past the last commit and written over later, so a failure to write
  // them changes nothing; what matters is that no run is left behind by a connection,
  // which another thread may use or close next.
  if ((flags & SQLITE_SHM_UNLOCK) != 0 && t_holding != nullptr) (void)write_run(t_holding);
  if (!has(file, 2)) return SQLITE_IOERR_SHMLOCK;
  return real(file)->pMethods->xShmLock(real(file), offset, n, flags);
}
void shim_shm_barrier(sqlite3_file* file) {
  // SQLite may be about to publish what this thread wrote to the WAL (frame_vfs.h).
  if (t_holding != nullptr && write_run(t_holding) != SQLITE_OK) {
    // Unreachable with SQLite's order of writes (a commit's last page sends its run), and
    // SQLite could not be told: stop rather than publish frames that are not in the file.
    log::error("wal_frames_write_failed");
    std::abort();
  }
  if (has(file, 2)) real(file)->pMethods->xShmBarrier(real(file));
}
int shim_shm_unmap(sqlite3_file* file, int delete_flag) {
  if (!has(file, 2)) return SQLITE_OK;
  return real(file)->pMethods->xShmUnmap(real(file), delete_flag);
}
int shim_fetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
  if (const int rc = settle(file); rc != SQLITE_OK) return rc;
  if (!has(file, 3)) {
    *out = nullptr;  // "not mapped": SQLite reads instead
    return SQLITE_OK;
  }
  return real(file)->pMethods->xFetch(real(file), offset, amount, out);
}
int shim_unfetch(sqlite3_file* file, sqlite3_int64 offset, void* page) {
  if (!has(file, 3)) return SQLITE_OK;
  return real(file)->pMethods->xUnfetch(real(file), offset, page);
}

const sqlite3_io_methods kMethods = {
    3,  // iVersion: shared memory (2) and memory-mapped reads (3), as the unix VFS has
    shim_close,      shim_read,          shim_write,        shim_truncate,
    shim_sync,       shim_file_size,     shim_lock,         shim_unlock,
    shim_check_reserved_lock,            shim_file_control, shim_sector_size,
    shim_device_characteristics,         shim_shm_map,      shim_shm_lock,
    shim_shm_barrier, shim_shm_unmap,    shim_fetch,        shim_unfetch,
};

int shim_open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  auto* f = new (file) ShimFile{};
  f->real = reinterpret_cast<sqlite3_file*>(f + 1);
  f->wal = (flags & SQLITE_OPEN_WAL) != 0;
  const int rc = g_root->xOpen(g_root, name, f->real, flags, out_flags);
  // A file whose open set methods is closed by SQLite even after a failure (sqlite3.h).
  if (f->real->pMethods == nullptr) {
    f->~ShimFile();
    file->pMethods = nullptr;
    return rc;
  }
  file->pMethods = &kMethods;
  return rc;
}

// The VFS methods other than xOpen: the wrapped VFS's, called with the wrapped VFS.
int vfs_delete(sqlite3_vfs*, const char* name, int sync_dir) { return g_root->xDelete(g_root, name, sync_dir); }
int vfs_access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return g_root->xAccess(g_root, name, flags, out);
}
int vfs_full_pathname(sqlite3_vfs*, const char* name, int size, char* out) {
  return g_root->xFullPathname(g_root, name, size, out);
}
void* vfs_dl_open(sqlite3_vfs*, const char* name) { return g_root->xDlOpen(g_root, name); }
void vfs_dl_error(sqlite3_vfs*, int size, char* out) { g_root->xDlError(g_root, size, out); }
void (*vfs_dl_sym(sqlite3_vfs*, void* handle, const char* symbol))(void) {
  return g_root->xDlSym(g_root, handle, symbol);
}
void vfs_dl_close(sqlite3_vfs*, void* handle) { g_root->xDlClose(g_root, handle); }
int vfs_randomness(sqlite3_vfs*, int size, char* out) { return g_root->xRandomness(g_root, size, out); }
int vfs_sleep(sqlite3_vfs*, int micros) { return g_root->xSleep(g_root, micros); }
int vfs_current_time(sqlite3_vfs*, double* out) { return g_root->xCurrentTime(g_root, out); }
int vfs_get_last_error(sqlite3_vfs*, int size, char* out) { return g_root->xGetLastError(g_root, size, out); }
int vfs_current_time_int64(sqlite3_vfs*, sqlite3_int64* out) { return g_root->xCurrentTimeInt64(g_root, out); }

const char* register_shim() {
  g_root = sqlite3_vfs_find(nullptr);
  if (g_root == nullptr || g_root->iVersion < 2) return nullptr;
  g_vfs = sqlite3_vfs{
      .iVersion = 2,
      .szOsFile = static_cast<int>(sizeof(ShimFile)) + g_root->szOsFile,
      .mxPathname = g_root->mxPathname,
      .pNext = nullptr,
      .zName = "healthhook-frames",
      .pAppData = nullptr,
      .xOpen = shim_open,
      .xDelete = vfs_delete,
      .xAccess = vfs_access,
      .xFullPathname = vfs_full_pathname,
      .xDlOpen = vfs_dl_open,
      .xDlError = vfs_dl_error,
      .xDlSym = vfs_dl_sym,
      .xDlClose = vfs_dl_close,
      .xRandomness = vfs_randomness,
      .xSleep = vfs_sleep,
      .xCurrentTime = vfs_current_time,
      .xGetLastError = vfs_get_last_error,
      .xCurrentTimeInt64 = vfs_current_time_int64,
      .xSetSystemCall = nullptr,
      .xGetSystemCall = nullptr,
      .xNextSystemCall = nullptr,
  };
  if (sqlite3_vfs_register(&g_vfs, 0) != SQLITE_OK) return nullptr;
  return g_vfs.zName;
}

}  // namespace

const char* frame_vfs_name() {
  static const char* const name = register_shim();  // thread-safe once (C++11 statics)
  return name;
}

uint64_t frame_vfs_writes_held() { return g_writes_held.load(std::memory_order_relaxed); }

}  // namespace hh::sqlite
