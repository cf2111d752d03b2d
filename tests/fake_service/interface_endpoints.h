#pragma once
// The fake's answers for the rest of the service's interface (service-interface.md): the
// user update, link codes, bulk export and import, lab reports and lab lookups, and the
// management endpoint's team listing. Built from the interface's shapes and rules, with
// its faults: 422 with a reason for input the interface refuses, 202 for a queued bulk
// import, pages by cursor and token. Used by FakeService (fake_service.h) on its io
// thread; the setters are called from tests. Thread-safe.
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace hh::fake {

struct Reply {
  unsigned status = 200;
  std::string body;
  std::optional<std::string> retry_after;
};
// {"detail":"<text>"} with `status`, the service's error shape.
Reply detail(unsigned status, std::string_view text);

// The canonical text form of a UUID: the interface's ids.
bool fake_is_uuid(std::string_view text);

// An item of GET /v1/org/{org_id}/team (service interface: Organization team).
struct OrgTeamEntry {
  std::string id, name, created_on, region;
};

// One parsed part of a multipart/form-data upload.
struct FormPart {
  std::string name, filename, content_type;
  std::string bytes;
};

// What a request brings to these endpoints.
struct InterfaceRequest {
  std::string method;                                       // "GET", "POST", "PATCH", "DELETE"
  std::vector<std::string> segments;                        // decoded path segments
  std::vector<std::pair<std::string, std::string>> query;  // every parameter, repeats kept
  std::string content_type;
  std::string body;
};

class InterfaceEndpoints {
 public:
  InterfaceEndpoints();

  // The answer, or nullopt when the request is not one of these endpoints.
  std::optional<Reply> route(const InterfaceRequest& request);
  // Whether `segments` name the management endpoint (its own key header).
  static bool is_management_path(const std::vector<std::string>& segments);

  // GET /v1/org/{org_id}/team: the organization and its teams, `page_size` per page.
  void set_organization(std::string org_id, std::vector<OrgTeamEntry> teams, size_t page_size = 2);
  // POST /v2/link/code/create answers this code (and an exchange URL ending in it) instead
  // of a generated one: for answers that break the interface's pattern.
  void set_link_code(std::optional<std::string> code);
  // POST /v2/link/bulk_export: the connection recipes (JSON objects) of `provider`,
  // `page_size` per page.
  void set_connections(const std::string& provider, std::vector<std::string> recipes, size_t page_size = 2);
  // A service whose pages never end: every page of the team list and of bulk export is
  // empty and names a new cursor, never one that came before.
  void set_endless_pages(bool endless);
  // POST /v2/link/bulk_import: these user ids fail; with `slow` a wait_for_completion
  // import is not done within 20 s (answers 202).
  void set_import_failures(std::set<std::string> user_ids);
  // A service that lies: these user ids are imported but left out of both lists.
  void set_import_unlisted(std::set<std::string> user_ids);
  // And one that names users it was not sent: these ids are listed as imported too.
  void set_import_strangers(std::vector<std::string> user_ids);
  void set_import_slow(bool slow);
  // The user ids imported so far, in order (what the service holds).
  std::vector<std::string> imported_user_ids() const;
  // GET /lab_report/v1/parser/job/{job_id} answers `body` (a ParsingJob object).
  void set_parsing_job(const std::string& job_id, std::string body);
  // The parts of the last upload (POST /lab_report/v1/parser/job).
  std::vector<FormPart> last_upload() const;

 private:
  Reply update_user(const std::string& user_id, const InterfaceRequest& request);
  Reply create_link_code(const InterfaceRequest& request);
  Reply list_teams(const std::string& org_id, const InterfaceRequest& request);
  Reply bulk_export(const InterfaceRequest& request);
  Reply bulk_import(const InterfaceRequest& request);
  Reply upload_lab_report(const InterfaceRequest& request);
  Reply get_parsing_job(const std::string& job_id);
  Reply area_info(const InterfaceRequest& request);
  Reply lab_accounts(const InterfaceRequest& request);
  Reply markers(const InterfaceRequest& request);

  mutable std::mutex mutex_;
  std::string org_id_;                                    // GUARDED_BY(mutex_)
  std::vector<OrgTeamEntry> teams_;                       // GUARDED_BY(mutex_)
  size_t team_page_size_ = 2;                             // GUARDED_BY(mutex_)
  bool endless_pages_ = false;                            // GUARDED_BY(mutex_)
  uint64_t endless_pages_sent_ = 0;                       // GUARDED_BY(mutex_)
  std::optional<std::string> link_code_;                  // GUARDED_BY(mutex_)
  uint64_t link_codes_made_ = 0;                          // GUARDED_BY(mutex_)
  std::map<std::string, std::vector<std::string>> connections_;  // GUARDED_BY(mutex_)
  size_t export_page_size_ = 2;                           // GUARDED_BY(mutex_)
  std::set<std::string> import_failures_;                 // GUARDED_BY(mutex_)
  std::set<std::string> import_unlisted_;                 // GUARDED_BY(mutex_)
  std::vector<std::string> import_strangers_;             // GUARDED_BY(mutex_)
  bool import_slow_ = false;                              // GUARDED_BY(mutex_)
  std::vector<std::string> imported_;                     // GUARDED_BY(mutex_)
  std::map<std::string, std::string> parsing_jobs_;       // GUARDED_BY(mutex_)
  uint64_t jobs_made_ = 0;                                // GUARDED_BY(mutex_)
  std::vector<FormPart> last_upload_;                     // GUARDED_BY(mutex_)
};

}  // namespace hh::fake
