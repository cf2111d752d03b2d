#pragma once
// Names a thread, so `top -H`, `ps -L`, gdb and perf show what each thread of the server
// does (hh-io, hh-inbox-writer, hh-wal-sync, hh-parse, hh-checkpoint, hh-fetch) instead
// of one `healthhook` per thread. The main thread keeps the process name: tools such as
// `pgrep healthhook` and `systemctl status` read that one.
#include <string>
#include <string_view>
#include <thread>
#include <utility>

namespace hh {

// Linux keeps 15 bytes of a name; a longer one is cut.
void name_thread(std::thread& thread, std::string_view name);
void name_this_thread(std::string_view name);

// Starts `body` on a new thread and names it before returning: once the starter goes on
// (and, in serve, logs "listening"), the name is there. The thread also names itself
// before `body` runs, so a thread it starts at once (Asio's resolver thread, which the
// fetcher's first request starts) inherits this name, not the starter's.
template <typename Body>
std::thread start_named_thread(std::string_view name, Body&& body) {
  std::thread thread([name = std::string(name), body = std::forward<Body>(body)]() mutable {
    name_this_thread(name);
    body();
  });
  name_thread(thread, name);
  return thread;
}

}  // namespace hh
