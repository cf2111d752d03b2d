#include "tests/forward/scripted_backend.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

namespace hh::test {

struct ScriptedBackend::Link::Shared {
  mutable std::mutex mutex;
  std::condition_variable stopping_changed;
  bool stopping = false;
  std::vector<ScriptedRequest> requests;
  std::set<int> open_fds;
};

namespace {

constexpr int kPollMs = 50;

// Waits until `fd` is readable; false when stopping.
bool readable(int fd, const ScriptedBackend::Link& link) {
  for (;;) {
    if (link.stopping()) return false;
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, kPollMs);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

std::string lower(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The value of header `name` (lower case) in `head`; "" when absent.
std::string header_value(const std::string& head, const std::string& name) {
  const std::string lowered = lower(head);
  const size_t at = lowered.find("\r\n" + name + ":");
  if (at == std::string::npos) return "";
  size_t start = at + 2 + name.size() + 1;
  const size_t end = head.find("\r\n", start);
  while (start < end && (head[start] == ' ' || head[start] == '\t')) ++start;
  return head.substr(start, end - start);
}

}  // namespace

bool ScriptedBackend::Link::stopping() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->stopping;
}

std::string ScriptedBackend::Link::read_bytes(size_t n) {
  if (!buffered_.empty()) {
    std::string out = buffered_.substr(0, n);
    buffered_.erase(0, out.size());
    return out;
  }
  if (!readable(fd_, *this)) return "";
  std::string out(n, '\0');
  const ssize_t got = ::recv(fd_, out.data(), n, 0);
  out.resize(got > 0 ? static_cast<size_t>(got) : 0);
  return out;
}

std::optional<ScriptedRequest> ScriptedBackend::Link::read_request() {
  size_t end;
  while ((end = buffered_.find("\r\n\r\n")) == std::string::npos) {
    if (!readable(fd_, *this)) return std::nullopt;
    char chunk[8192];
    const ssize_t got = ::recv(fd_, chunk, sizeof chunk, 0);
    if (got <= 0) return std::nullopt;
    buffered_.append(chunk, static_cast<size_t>(got));
  }
  ScriptedRequest request;
  request.head = buffered_.substr(0, end + 2);
  buffered_.erase(0, end + 4);
  const size_t length = static_cast<size_t>(std::stoull("0" + header_value(request.head, "content-length")));
  while (buffered_.size() < length) {
    if (!readable(fd_, *this)) return std::nullopt;
    char chunk[8192];
    const ssize_t got = ::recv(fd_, chunk, sizeof chunk, 0);
    if (got <= 0) return std::nullopt;
    buffered_.append(chunk, static_cast<size_t>(got));
  }
  request.body = buffered_.substr(0, length);
  buffered_.erase(0, length);
  request.id = header_value(request.head, "webhook-id");
  request.connection = connection_;
  request.on_connection = requests_++;
  std::lock_guard lock(shared_->mutex);
  shared_->requests.push_back(request);
  return request;
}

bool ScriptedBackend::Link::write(std::string_view bytes) {
  while (!bytes.empty()) {
    if (stopping()) return false;
    pollfd p{fd_, POLLOUT, 0};
    const int ready = ::poll(&p, 1, kPollMs);
    if (ready < 0 && errno != EINTR) return false;
    if (ready <= 0) continue;
    const ssize_t sent = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(sent));
  }
  return true;
}

bool ScriptedBackend::Link::wait(std::chrono::milliseconds how_long) {
  std::unique_lock lock(shared_->mutex);
  return !shared_->stopping_changed.wait_for(lock, how_long, [this] { return shared_->stopping; });
}

void ScriptedBackend::Link::wait_for_close() {
  while (!read_bytes(65536).empty()) {
  }
}

struct ScriptedBackend::Impl {
  Script script;
  std::shared_ptr<Link::Shared> shared = std::make_shared<Link::Shared>();
  int listener = -1;
  uint16_t port = 0;
  std::atomic<uint64_t> accepted{0};
  std::thread acceptor;
  std::mutex threads_mutex;
  std::vector<std::thread> threads;
  bool stopped = false;

  void accept_loop() {
    for (;;) {
      {
        std::lock_guard lock(shared->mutex);
        if (shared->stopping) return;
      }
      pollfd p{listener, POLLIN, 0};
      if (::poll(&p, 1, kPollMs) <= 0) continue;
      const int fd = ::accept(listener, nullptr, nullptr);
      if (fd < 0) continue;
      const uint64_t number = ++accepted;
      {
        std::lock_guard lock(shared->mutex);
        if (shared->stopping) {
          ::close(fd);
          return;
        }
        shared->open_fds.insert(fd);
      }
      std::lock_guard lock(threads_mutex);
      threads.emplace_back([this, fd, number] {
        Link link(fd, number, shared);
        script(link);
        {
          std::lock_guard lock(shared->mutex);
          shared->open_fds.erase(fd);
        }
        ::shutdown(fd, SHUT_RDWR);
        ::close(fd);
      });
    }
  }
};

ScriptedBackend::ScriptedBackend(Script script) : impl_(std::make_unique<Impl>()) {
  impl_->script = std::move(script);
  impl_->listener = ::socket(AF_INET, SOCK_STREAM, 0);
  if (impl_->listener < 0) throw std::runtime_error("scripted backend: socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(impl_->listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(impl_->listener, 64) != 0) {
    ::close(impl_->listener);
    throw std::runtime_error("scripted backend: bind/listen");
  }
  socklen_t length = sizeof address;
  ::getsockname(impl_->listener, reinterpret_cast<sockaddr*>(&address), &length);
  impl_->port = ntohs(address.sin_port);
  impl_->acceptor = std::thread([this] { impl_->accept_loop(); });
}

ScriptedBackend::~ScriptedBackend() { stop(); }

void ScriptedBackend::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  {
    std::lock_guard lock(impl_->shared->mutex);
    impl_->shared->stopping = true;
    // Wakes a blocked send or recv of a script (they poll, so this only hurries them).
    for (const int fd : impl_->shared->open_fds) ::shutdown(fd, SHUT_RDWR);
  }
  impl_->shared->stopping_changed.notify_all();
  if (impl_->acceptor.joinable()) impl_->acceptor.join();
  ::close(impl_->listener);
  std::lock_guard lock(impl_->threads_mutex);
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
}

uint16_t ScriptedBackend::port() const { return impl_->port; }

std::string ScriptedBackend::url() const { return "http://127.0.0.1:" + std::to_string(impl_->port) + "/hooks"; }

std::vector<ScriptedRequest> ScriptedBackend::requests() const {
  std::lock_guard lock(impl_->shared->mutex);
  return impl_->shared->requests;
}

size_t ScriptedBackend::connections() const { return static_cast<size_t>(impl_->accepted.load()); }

}  // namespace hh::test
