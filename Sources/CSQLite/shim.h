#ifndef CORELOCATION_CSQLITE_SHIM_H
#define CORELOCATION_CSQLITE_SHIM_H
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro (a cast of -1) that Swift does not import.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

/// `sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, 0)` (a variadic call Swift cannot
/// make): closing the last connection then leaves the write-ahead log as it is instead of copying
/// it into the database file. For a damaged file that is moved aside as it was found.
static inline int csqlite_no_checkpoint_on_close(sqlite3 *db) {
  return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}

/* ---------------------------------------------------------------------------------------------
 * A fault-injecting VFS, for tests: I/O errors where a real file system cannot be made to produce
 * them on demand (issue 22). It wraps the default VFS ("unix") and forwards every call; while a
 * fault is armed, the matching operations fail with the configured result code and errno after
 * `countdown` of them have passed.
 *
 * Each registered VFS (one per name) has its own `csqlite_faults`, reachable from Swift through
 * the pointer `csqlite_faults_register` returns; stores opened with that VFS name (SQLite's
 * `zVfs`) see its faults, every other connection is untouched. The state is read and written
 * without locks: arm and inspect it from the thread that uses the store (tests do).
 * ------------------------------------------------------------------------------------------- */

/// Operations a fault can hit (a bit mask).
enum {
  CSQLITE_FAULT_WRITE = 1,
  CSQLITE_FAULT_SYNC = 2,
  CSQLITE_FAULT_TRUNCATE = 4,
  CSQLITE_FAULT_READ = 8
};

/// Files a fault can hit (a bit mask; 0 means every file).
enum {
  CSQLITE_FAULT_MAIN_DB = 1,
  CSQLITE_FAULT_WAL = 2,
  CSQLITE_FAULT_JOURNAL = 4
};

/// One VFS's fault plan and what happened.
typedef struct csqlite_faults {
  /// The operations that fail (CSQLITE_FAULT_WRITE | ...); 0: nothing fails.
  int operations;
  /// The files they fail on (CSQLITE_FAULT_MAIN_DB | ...); 0: every file.
  int files;
  /// Matching operations to let through before the first failure.
  int countdown;
  /// Whether every matching operation after the first failure fails too (a full disk), or only
  /// that one (a transient I/O error).
  int persistent;
  /// The result code a failing operation returns (SQLITE_IOERR_WRITE, SQLITE_FULL, ...).
  int code;
  /// The errno left for `sqlite3_system_errno` (EIO, ENOSPC, ...).
  int error;
  /// Failures injected so far.
  int failures;
  /// Matching operations seen so far (failed or not).
  int seen;
} csqlite_faults;

typedef struct csqlite_fault_vfs {
  sqlite3_vfs base;
  sqlite3_vfs *real;
  csqlite_faults faults;
} csqlite_fault_vfs;

typedef struct csqlite_fault_file {
  sqlite3_file base;
  sqlite3_file *real;
  csqlite_faults *faults;
  int kind;
} csqlite_fault_file;

/// Whether this operation on this file fails now; counts it.
static inline int csqlite_fault_hit(csqlite_fault_file *file, int operation) {
  csqlite_faults *faults = file->faults;
  if ((faults->operations & operation) == 0) return 0;
  if (faults->files != 0 && (faults->files & file->kind) == 0) return 0;
  faults->seen += 1;
  if (faults->failures > 0 && faults->persistent) {
    faults->failures += 1;
    errno = faults->error;
    return 1;
  }
  if (faults->failures > 0) return 0;
  if (faults->countdown > 0) {
    faults->countdown -= 1;
    return 0;
  }
  faults->failures += 1;
  errno = faults->error;
  return 1;
}

static inline csqlite_fault_file *csqlite_fault_cast(sqlite3_file *file) {
  return (csqlite_fault_file *)file;
}

static inline int csqlite_fault_close(sqlite3_file *file) {
  csqlite_fault_file *f = csqlite_fault_cast(file);
  int rc = f->real->pMethods ? f->real->pMethods->xClose(f->real) : SQLITE_OK;
  f->base.pMethods = NULL;
  return rc;
}

static inline int csqlite_fault_read(sqlite3_file *file, void *buffer, int amount,
                                     sqlite3_int64 offset) {
  csqlite_fault_file *f = csqlite_fault_cast(file);
  if (csqlite_fault_hit(f, CSQLITE_FAULT_READ)) return f->faults->code;
  return f->real->pMethods->xRead(f->real, buffer, amount, offset);
}

static inline int csqlite_fault_write(sqlite3_file *file, const void *buffer, int amount,
                                      sqlite3_int64 offset) {
  csqlite_fault_file *f = csqlite_fault_cast(file);
  if (csqlite_fault_hit(f, CSQLITE_FAULT_WRITE)) return f->faults->code;
  return f->real->pMethods->xWrite(f->real, buffer, amount, offset);
}

static inline int csqlite_fault_truncate(sqlite3_file *file, sqlite3_int64 size) {
  csqlite_fault_file *f = csqlite_fault_cast(file);
  if (csqlite_fault_hit(f, CSQLITE_FAULT_TRUNCATE)) return f->faults->code;
  return f->real->pMethods->xTruncate(f->real, size);
}

static inline int csqlite_fault_sync(sqlite3_file *file, int flags) {
  csqlite_fault_file *f = csqlite_fault_cast(file);
  if (csqlite_fault_hit(f, CSQLITE_FAULT_SYNC)) return f->faults->code;
  return f->real->pMethods->xSync(f->real, flags);
}

static inline int csqlite_fault_file_size(sqlite3_file *file, sqlite3_int64 *size) {
  csqlite_fault_file *f = csqlite_fault_cast(file);
  return f->real->pMethods->xFileSize(f->real, size);
}

static inline int csqlite_fault_lock(sqlite3_file *file, int level) {
  csqlite_fault_file *f = csqlite_fault_cast(file);
  return f->real->pMethods->xLock(f->real, level);
}

static inline int csqlite_fault_unlock(sqlite3_file *file, int level) {
  csqlite_fault_file *f = csqlite_fault_cast(file);
  return f->real->pMethods->xUnlock(f->real, level);
}

static inline int csqlite_fault_check_reserved(sqlite3_file *file, int *result) {
  csqlite_fault_file *f = csqlite_fault_cast(file);
  return f->real->pMethods->xCheckReservedLock(f->real, result);
}

static inline int csqlite_fault_file_control(sqlite3_file *file, int operation, void *argument) {
  csqlite_fault_file *f = csqlite_fault_cast(file);
  return f->real->pMethods->xFileControl(f->real, operation, argument);
}

static inline int csqlite_fault_sector_size(sqlite3_file *file) {
  csqlite_fault_file *f = csqlite_fault_cast(file);
  return f->real->pMethods->xSectorSize(f->real);
}

static inline int csqlite_fault_device(sqlite3_file *file) {
  csqlite_fault_file *f = csqlite_fault_cast(file);
  return f->real->pMethods->xDeviceCharacteristics(f->real);
}

static inline int csqlite_fault_shm_map(sqlite3_file *file, int page, int size, int extend,
                                        void volatile **memory) {
  csqlite_fault_file *f = csqlite_fault_cast(file);
  return f->real->pMethods->xShmMap(f->real, page, size, extend, memory);
}

static inline int csqlite_fault_shm_lock(sqlite3_file *file, int offset, int count, int flags) {
  csqlite_fault_file *f = csqlite_fault_cast(file);
  return f->real->pMethods->xShmLock(f->real, offset, count, flags);
}

static inline void csqlite_fault_shm_barrier(sqlite3_file *file) {
  csqlite_fault_file *f = csqlite_fault_cast(file);
  f->real->pMethods->xShmBarrier(f->real);
}

static inline int csqlite_fault_shm_unmap(sqlite3_file *file, int delete_flag) {
  csqlite_fault_file *f = csqlite_fault_cast(file);
  return f->real->pMethods->xShmUnmap(f->real, delete_flag);
}

static inline int csqlite_fault_fetch(sqlite3_file *file, sqlite3_int64 offset, int amount,
                                      void **pointer) {
  csqlite_fault_file *f = csqlite_fault_cast(file);
  return f->real->pMethods->xFetch(f->real, offset, amount, pointer);
}

static inline int csqlite_fault_unfetch(sqlite3_file *file, sqlite3_int64 offset, void *pointer) {
  csqlite_fault_file *f = csqlite_fault_cast(file);
  return f->real->pMethods->xUnfetch(f->real, offset, pointer);
}

/// The method table for a wrapped file whose own table has `version` (1 to 3): a wrapper never
/// claims methods the file it wraps lacks.
static inline const sqlite3_io_methods *csqlite_fault_methods(int version) {
  static const sqlite3_io_methods v1 = {
      1, csqlite_fault_close, csqlite_fault_read, csqlite_fault_write, csqlite_fault_truncate,
      csqlite_fault_sync, csqlite_fault_file_size, csqlite_fault_lock, csqlite_fault_unlock,
      csqlite_fault_check_reserved, csqlite_fault_file_control, csqlite_fault_sector_size,
      csqlite_fault_device, NULL, NULL, NULL, NULL, NULL, NULL};
  static const sqlite3_io_methods v2 = {
      2, csqlite_fault_close, csqlite_fault_read, csqlite_fault_write, csqlite_fault_truncate,
      csqlite_fault_sync, csqlite_fault_file_size, csqlite_fault_lock, csqlite_fault_unlock,
      csqlite_fault_check_reserved, csqlite_fault_file_control, csqlite_fault_sector_size,
      csqlite_fault_device, csqlite_fault_shm_map, csqlite_fault_shm_lock,
      csqlite_fault_shm_barrier, csqlite_fault_shm_unmap, NULL, NULL};
  static const sqlite3_io_methods v3 = {
      3, csqlite_fault_close, csqlite_fault_read, csqlite_fault_write, csqlite_fault_truncate,
      csqlite_fault_sync, csqlite_fault_file_size, csqlite_fault_lock, csqlite_fault_unlock,
      csqlite_fault_check_reserved, csqlite_fault_file_control, csqlite_fault_sector_size,
      csqlite_fault_device, csqlite_fault_shm_map, csqlite_fault_shm_lock,
      csqlite_fault_shm_barrier, csqlite_fault_shm_unmap, csqlite_fault_fetch,
      csqlite_fault_unfetch};
  if (version >= 3) return &v3;
  if (version == 2) return &v2;
  return &v1;
}

static inline int csqlite_fault_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file,
                                     int flags, int *out_flags) {
  csqlite_fault_vfs *fault_vfs = (csqlite_fault_vfs *)vfs;
  csqlite_fault_file *f = csqlite_fault_cast(file);
  sqlite3_file *real = (sqlite3_file *)(f + 1);
  memset(f, 0, sizeof(*f));
  f->real = real;
  f->faults = &fault_vfs->faults;
  f->kind = (flags & SQLITE_OPEN_MAIN_DB)       ? CSQLITE_FAULT_MAIN_DB
            : (flags & SQLITE_OPEN_WAL)         ? CSQLITE_FAULT_WAL
            : (flags & SQLITE_OPEN_MAIN_JOURNAL) ? CSQLITE_FAULT_JOURNAL
                                                 : 0;
  int rc = fault_vfs->real->xOpen(fault_vfs->real, name, real, flags, out_flags);
  // SQLite calls xClose on a file whose pMethods is set, even after a failed open: mirror the
  // wrapped file.
  f->base.pMethods = real->pMethods ? csqlite_fault_methods(real->pMethods->iVersion) : NULL;
  return rc;
}

/// Registers a fault-injecting VFS named `name` over the default VFS (not as the default) and
/// returns its fault plan, all zero (nothing fails). NULL when a VFS of that name exists already
/// (use a new name for each test), when out of memory, or when there is no default VFS.
static inline csqlite_faults *csqlite_faults_register(const char *name) {
  if (sqlite3_vfs_find(name) != NULL) return NULL;
  sqlite3_vfs *real = sqlite3_vfs_find(NULL);
  if (real == NULL) return NULL;
  csqlite_fault_vfs *vfs = (csqlite_fault_vfs *)calloc(1, sizeof(csqlite_fault_vfs));
  char *copy = strdup(name);
  if (vfs == NULL || copy == NULL) {
    free(vfs);
    free(copy);
    return NULL;
  }
  // Every method but xOpen is the default VFS's own: they use no per-VFS data beyond
  // mxPathname, which is copied too (the default xOpen, which reads pAppData, is called with the
  // default VFS itself).
  vfs->base = *real;
  vfs->base.pNext = NULL;
  vfs->base.zName = copy;
  vfs->base.szOsFile = (int)sizeof(csqlite_fault_file) + real->szOsFile;
  vfs->base.xOpen = csqlite_fault_open;
  vfs->real = real;
  if (sqlite3_vfs_register(&vfs->base, 0) != SQLITE_OK) {
    free(copy);
    free(vfs);
    return NULL;
  }
  return &vfs->faults;
}

#endif
