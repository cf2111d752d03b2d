// healthhook sign: prints the signature headers for a body read from standard input, as
// the service would send them, one "name: value" line each:
//
//   svix-id: msg_…
//   svix-timestamp: 1715853600
//   svix-signature: v1,…
//
// For trying a receiver by hand (curl -H "$line" for each line) and for tests. The secret
// comes from a file (never argv); defaults: a random msg_… id and the current time.
#include <openssl/rand.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <iterator>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "common/timestamp.h"
#include "config/secrets.h"
#include "receiver/signature/webhook_signature.h"

namespace hh::cli {
namespace {

struct SignFlags {
  std::string secret_file;
  std::optional<std::string> id;
  std::optional<std::string> timestamp;
};

// "msg_" and 27 base62 characters, the shape of the service's message ids.
std::string random_message_id() {
  static constexpr std::string_view kAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  unsigned char bytes[27];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return {};
  std::string id = "msg_";
  for (const unsigned char b : bytes) id.push_back(kAlphabet[b % kAlphabet.size()]);  // bias irrelevant for an id
  return id;
}

int run_sign(const SignFlags& flags) {
  auto secret = config::read_signing_secret_file(flags.secret_file, ".");
  if (!secret) {
    report_error("sign", "--secret-file: " + secret.error());
    return kExitBadConfig;
  }
  int64_t timestamp =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (flags.timestamp) {
    auto ms = parse_time_bound_ms(*flags.timestamp);
    if (!ms) {
      report_error("sign", "--timestamp: expected Unix seconds, RFC 3339 or a date, got \"" + *flags.timestamp + "\"");
      return kExitBadConfig;
    }
    // A receiver reads the timestamp as digits only: a time before 1970 could never verify.
    if (*ms < 0) {
      report_error("sign", "--timestamp: must not be before 1970-01-01, got \"" + *flags.timestamp + "\"");
      return kExitBadConfig;
    }
    timestamp = *ms / 1000;  // whole seconds, rounded down
  }
  const std::string id = flags.id ? *flags.id : random_message_id();
  if (id.empty() || id.size() > signature::kMaxMessageIdBytes || id.find_first_of("\r\n") != std::string::npos) {
    report_error("sign", "--id: must be 1 to 256 bytes on one line");
    return kExitBadConfig;
  }
  std::string body;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      report_error("sign", std::string("reading the body from standard input: ") + std::strerror(errno));
      return kExitFailure;
    }
    if (n == 0) break;
    body.append(buffer, static_cast<size_t>(n));
  }
  const std::string timestamp_text = std::to_string(timestamp);
  auto signed_value = signature::sign(*secret, id, timestamp_text, body);
  if (!signed_value) {
    report_error("sign", "--secret-file: " + signed_value.error());
    return kExitBadConfig;
  }
  std::cout << "svix-id: " << id << "\nsvix-timestamp: " << timestamp_text << "\nsvix-signature: " << *signed_value
            << "\n";
  return kExitOk;
}

}  // namespace

void add_sign_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<SignFlags>();
  auto* command = app.add_subcommand(
      "sign", "Print the svix-id/-timestamp/-signature headers for a body read from standard input");
  command->add_option("--secret-file", flags->secret_file, "File holding the signing secret (whsec_…)")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--id", flags->id, "Message id (default: a random msg_… id)");
  command->add_option("--timestamp", flags->timestamp, "Signed timestamp: Unix seconds, RFC 3339 or a date (default: now)");
  command->callback([flags, &exit_code] { exit_code = run_sign(*flags); });
}

}  // namespace hh::cli
