#pragma once
// Names a thread, so `top -H`, `ps -L`, gdb and perf show what each thread of the server
// does (hh-io, hh-inbox-writer, hh-wal-sync, hh-parse, hh-checkpoint, hh-fetch) instead
// of one `healthhook` per thread. The main thread keeps the process name: tools such as
// `pgrep healthhook` and `systemctl status` read that one.
#include <string_view>
#include <thread>

namespace hh {

// Named by the thread that started it, right after: once the starter goes on (and, in
// serve, logs "listening"), the name is there. Linux keeps 15 bytes; a longer name is cut.
void name_thread(std::thread& thread, std::string_view name);

}  // namespace hh
