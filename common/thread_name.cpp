#include "common/thread_name.h"

#include <pthread.h>

#include <string>

namespace hh {

void name_thread(std::thread& thread, std::string_view name) {
  // pthread_setname_np fails with ERANGE beyond 15 bytes instead of cutting the name.
  const std::string kept(name.substr(0, 15));
  pthread_setname_np(thread.native_handle(), kept.c_str());  // a help, not a need: failure ignored
}

void name_this_thread(std::string_view name) {
  const std::string kept(name.substr(0, 15));
  pthread_setname_np(pthread_self(), kept.c_str());
}

}  // namespace hh
