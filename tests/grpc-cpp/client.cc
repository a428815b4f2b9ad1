// The gRPC C++ client test: the stock generator's stubs (protoc --grpc_out with grpc_cpp_plugin,
// generated from proto/ at build time) against a running moderation-server, over cleartext
// HTTP/2, TLS or mutual TLS.
//
//   moderation-grpc-client HOST:PORT APP_ID:KEY [--tls CA.pem [--client-cert CERT.pem --client-key KEY.pem]]
//                          [--health-only]
//
// --tls: a TLS channel (grpc::SslCredentials) that trusts the CAs in CA.pem and verifies the
// server's certificate against HOST (an IP address or a DNS name); --client-cert and --client-key
// add a client certificate (mutual TLS). Without --tls the channel is cleartext (h2c).
//
// First, without an API key: grpc.health.v1.Health/Check answers SERVING (health checks need no
// key, as load balancers and Kubernetes probes send none) and a moderation call (GetUser) is
// refused with UNAUTHENTICATED. With --tls, the call's auth context says the transport is TLS
// with a certificate for HOST. --health-only stops there.
//
// Then, with the API key in `authorization: Bearer APP_ID:KEY` and the acting user in
// `x-on-behalf-of`: CreateUser (three users), CreateGroup on behalf of its owner, a Subscribe
// stream (ClientReader) on behalf of the owner replaying the group's actions from after_seq 0
// and then live, JoinGroup, a KickMember refused (by a user who is not a member: PERMISSION_DENIED
// with reason ERR_GROUP_NOT_JOINED, read from the trailing metadata's grpc-status-details-bin as
// a google.rpc.Status holding a google.rpc.ErrorInfo), KickMember by the owner; then reads the
// stream's created, joined and kicked actions and cancels it with ClientContext::TryCancel(),
// and checks that the channel still serves a keyed call (GetUser) and that a call without a key
// on the same connection is still refused.
// Prints one line per check ("ok - …" or "FAIL - …") and "N passed, M failed"; exits 0 only when
// every check passed.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "moderation/v1/moderation.grpc.pb.h"

namespace {

namespace mv1 = moderation::v1;
namespace hv1 = grpc::health::v1;

int passed = 0;
int failed = 0;

bool Check(bool ok, const std::string& what, const std::string& detail = "") {
  if (ok) {
    ++passed;
    std::printf("ok - %s\n", what.c_str());
  } else {
    ++failed;
    std::printf("FAIL - %s%s%s\n", what.c_str(), detail.empty() ? "" : ": ", detail.c_str());
  }
  std::fflush(stdout);
  return ok;
}

std::string Describe(const grpc::Status& status) {
  return "grpc status " + std::to_string(status.error_code()) + " \"" + status.error_message() + "\"";
}

struct Caller {
  std::unique_ptr<mv1::Moderation::Stub> stub;
  std::string key;  // APP_ID:KEY

  // A fresh context (one per call) with the key, the acting user (none: the app) and a deadline.
  std::unique_ptr<grpc::ClientContext> Context(const std::string& on_behalf_of, int seconds = 10) const {
    auto context = std::make_unique<grpc::ClientContext>();
    context->AddMetadata("authorization", "Bearer " + key);
    if (!on_behalf_of.empty()) context->AddMetadata("x-on-behalf-of", on_behalf_of);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
    return context;
  }
};

// The value of a trailing metadata entry, or nullptr.
const grpc::string_ref* Trailer(const grpc::ClientContext& context, const std::string& name) {
  const auto& trailers = context.GetServerTrailingMetadata();
  auto it = trailers.find(name);
  return it == trailers.end() ? nullptr : &it->second;
}

bool CreateUser(const Caller& caller, const std::string& uid, const std::string& name) {
  mv1::CreateUserRequest request;
  request.set_uid(uid);
  request.set_name(name);
  mv1::CreateUserResponse response;
  auto context = caller.Context("");
  grpc::Status status = caller.stub->CreateUser(context.get(), request, &response);
  return Check(status.ok() && response.user().uid() == uid, "CreateUser " + uid,
               status.ok() ? "the response names uid " + response.user().uid() : Describe(status));
}

// The whole of a file (a PEM), or exits: a missing file is a usage error.
std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "moderation-grpc-client: cannot read %s\n", path.c_str());
    std::exit(2);
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// A property of the call's auth context ("" when it has none).
std::string AuthProperty(const grpc::ClientContext& context, const std::string& name) {
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (!auth) return "";
  std::vector<grpc::string_ref> values = auth->FindPropertyValues(name);
  return values.empty() ? "" : std::string(values[0].data(), values[0].size());
}

// Every value of a property of the call's auth context, comma-separated.
std::string AuthProperties(const grpc::ClientContext& context, const std::string& name) {
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  std::string joined;
  if (!auth) return joined;
  for (const grpc::string_ref& value : auth->FindPropertyValues(name))
    joined += (joined.empty() ? "" : ",") + std::string(value.data(), value.size());
  return joined;
}

// A moderation call without an API key: refused with UNAUTHENTICATED.
void GetUserWithoutKey(const Caller& caller, const std::string& when) {
  mv1::GetUserRequest request;
  request.set_uid("cpp-nobody");
  mv1::GetUserResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Status status = caller.stub->GetUser(&context, request, &response);
  Check(status.error_code() == grpc::StatusCode::UNAUTHENTICATED,
        "GetUser without an API key " + when + " refused with UNAUTHENTICATED", Describe(status));
}

void Usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s HOST:PORT APP_ID:KEY [--tls CA.pem [--client-cert CERT.pem --client-key KEY.pem]] "
               "[--health-only]\n",
               program);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) Usage(argv[0]);
  const std::string target = argv[1];
  const std::string key = argv[2];
  std::string ca_file, cert_file, key_file;
  bool health_only = false;
  for (int i = 3; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--health-only") {
      health_only = true;
    } else if ((flag == "--tls" || flag == "--client-cert" || flag == "--client-key") && i + 1 < argc) {
      (flag == "--tls" ? ca_file : flag == "--client-cert" ? cert_file : key_file) = argv[++i];
    } else {
      Usage(argv[0]);
    }
  }
  if ((cert_file.empty() != key_file.empty()) || (!cert_file.empty() && ca_file.empty())) Usage(argv[0]);
  const bool tls = !ca_file.empty();
  // HOST of HOST:PORT ([::1]:PORT too): the name the server's certificate must carry.
  std::string host = target.substr(0, target.rfind(':'));
  if (host.size() > 1 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);

  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (tls) {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = ReadFile(ca_file);
    if (!cert_file.empty()) {
      options.pem_cert_chain = ReadFile(cert_file);
      options.pem_private_key = ReadFile(key_file);
    }
    credentials = grpc::SslCredentials(options);
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  std::shared_ptr<grpc::Channel> channel = grpc::CreateChannel(target, credentials);
  const std::string transport = !tls ? "cleartext" : cert_file.empty() ? "TLS" : "mutual TLS";
  std::printf("# %s, %s\n", target.c_str(), transport.c_str());
  std::fflush(stdout);
  Caller caller{mv1::Moderation::NewStub(channel), key};
  std::unique_ptr<hv1::Health::Stub> health = hv1::Health::NewStub(channel);

  // Health/Check without an API key: the one service that needs none. It is the channel's first
  // call, so it also makes the connection (and, with --tls, the TLS handshake).
  {
    hv1::HealthCheckRequest request;
    hv1::HealthCheckResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status status = health->Check(&context, request, &response);
    Check(status.ok() && response.status() == hv1::HealthCheckResponse::SERVING,
          "Health/Check without an API key answers SERVING",
          status.ok() ? "status " + hv1::HealthCheckResponse::ServingStatus_Name(response.status()) : Describe(status));
    if (tls) {
      // What gRPC's TLS handshake established: the transport, and the server certificate's names
      // (verified against the target by gRPC before any call ran).
      const std::string type = AuthProperty(context, GRPC_TRANSPORT_SECURITY_TYPE_PROPERTY_NAME);
      const std::string names = AuthProperties(context, GRPC_X509_SAN_PROPERTY_NAME);
      bool named = ("," + names + ",").find("," + host + ",") != std::string::npos;
      Check(status.ok() && type == GRPC_SSL_TRANSPORT_SECURITY_TYPE && named,
            "the call went over TLS, to a certificate naming " + host,
            "transport security \"" + type + "\", subject alternative names \"" + names + "\"");
    }
  }
  GetUserWithoutKey(caller, "on a fresh connection");
  if (health_only) {
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 && passed > 0 ? 0 : 1;
  }

  const std::string guid = "cpp-room";

  // Unary calls, as the app.
  bool users = CreateUser(caller, "cpp-owner", "Owner") & CreateUser(caller, "cpp-joiner", "Joiner") &
               CreateUser(caller, "cpp-outsider", "Outsider");

  // CreateGroup on behalf of its owner: the caller becomes the owner.
  {
    mv1::CreateGroupRequest request;
    request.set_guid(guid);
    request.set_name("C++ room");
    request.set_type(mv1::GROUP_TYPE_PUBLIC);
    mv1::CreateGroupResponse response;
    auto context = caller.Context("cpp-owner");
    grpc::Status status = caller.stub->CreateGroup(context.get(), request, &response);
    Check(status.ok() && response.group().guid() == guid && response.group().owner() == "cpp-owner",
          "CreateGroup " + guid + " on behalf of cpp-owner (owner cpp-owner)",
          status.ok() ? "group " + response.group().guid() + " owner " + response.group().owner() : Describe(status));
  }
  if (!users) std::printf("(users missing: the calls below are expected to fail)\n");

  // Subscribe on behalf of the owner to the group, replaying from after_seq 0, then live.
  auto stream_context = caller.Context("cpp-owner", 30);
  mv1::SubscribeRequest subscribe;
  subscribe.add_guids(guid);
  subscribe.set_after_seq(0);
  std::unique_ptr<grpc::ClientReader<mv1::SubscribeResponse>> reader =
      caller.stub->Subscribe(stream_context.get(), subscribe);

  // JoinGroup on behalf of the joiner.
  {
    mv1::JoinGroupRequest request;
    request.set_guid(guid);
    mv1::JoinGroupResponse response;
    auto context = caller.Context("cpp-joiner");
    grpc::Status status = caller.stub->JoinGroup(context.get(), request, &response);
    Check(status.ok() && response.action().action() == mv1::ACTION_TYPE_JOINED &&
              response.group().members_count() == 2,
          "JoinGroup by cpp-joiner (action joined, 2 members)",
          status.ok() ? "action " + std::to_string(response.action().action()) + ", members " +
                            std::to_string(response.group().members_count())
                      : Describe(status));
  }

  // A refused call: a kick by a user who is not a member of the group.
  {
    mv1::KickMemberRequest request;
    request.set_guid(guid);
    request.set_uid("cpp-joiner");
    mv1::KickMemberResponse response;
    auto context = caller.Context("cpp-outsider");
    grpc::Status status = caller.stub->KickMember(context.get(), request, &response);
    Check(status.error_code() == grpc::StatusCode::PERMISSION_DENIED,
          "KickMember by the non-member cpp-outsider refused with PERMISSION_DENIED", Describe(status));
    const grpc::string_ref* details = Trailer(*context, "grpc-status-details-bin");
    if (Check(details != nullptr, "the refusal's trailing metadata holds grpc-status-details-bin")) {
      std::string bytes(details->data(), details->size());
      Check(bytes == status.error_details(), "grpc-status-details-bin is what grpc::Status::error_details() holds");
      google::rpc::Status rich;
      google::rpc::ErrorInfo info;
      bool parsed = rich.ParseFromString(bytes);
      Check(parsed && rich.code() == grpc::StatusCode::PERMISSION_DENIED && rich.details_size() == 1 &&
                rich.details(0).UnpackTo(&info),
            "grpc-status-details-bin parses as google.rpc.Status (code 7) with one google.rpc.ErrorInfo",
            parsed ? "code " + std::to_string(rich.code()) + ", " + std::to_string(rich.details_size()) + " details"
                   : "not a google.rpc.Status");
      Check(info.reason() == "ERR_GROUP_NOT_JOINED" && info.domain() == "moderation.v1",
            "ErrorInfo reason ERR_GROUP_NOT_JOINED, domain moderation.v1",
            "reason \"" + info.reason() + "\", domain \"" + info.domain() + "\"");
    }
  }

  // KickMember by the owner.
  {
    mv1::KickMemberRequest request;
    request.set_guid(guid);
    request.set_uid("cpp-joiner");
    mv1::KickMemberResponse response;
    auto context = caller.Context("cpp-owner");
    grpc::Status status = caller.stub->KickMember(context.get(), request, &response);
    Check(status.ok() && response.action().action() == mv1::ACTION_TYPE_KICKED &&
              response.action().action_on().uid() == "cpp-joiner",
          "KickMember of cpp-joiner by the owner (action kicked)",
          status.ok() ? "action " + std::to_string(response.action().action()) : Describe(status));
  }

  // The stream: the replayed created, then joined and kicked, in seq order; the refused kick
  // left no action.
  {
    const std::vector<mv1::ActionType> expected = {mv1::ACTION_TYPE_CREATED, mv1::ACTION_TYPE_JOINED,
                                                   mv1::ACTION_TYPE_KICKED};
    std::string seen;
    bool in_order = true;
    uint64_t last_seq = 0;
    mv1::SubscribeResponse message;
    size_t count = 0;
    // The stream's first message says it is live (SubscriptionStarted): no action in it.
    bool started = reader->Read(&message) && message.has_started() && !message.has_action();
    Check(started, "Subscribe's first message is started (after_seq 0)",
          started ? "after_seq " + std::to_string(message.started().after_seq()) : message.DebugString());
    while (count < expected.size() && reader->Read(&message)) {
      const mv1::Action& action = message.action();
      seen += (seen.empty() ? "" : ", ") + mv1::ActionType_Name(action.action()) + " seq " +
              std::to_string(action.seq());
      if (action.action() != expected[count] || action.seq() <= last_seq ||
          action.action_for().guid() != guid)
        in_order = false;
      last_seq = action.seq();
      ++count;
    }
    bool live = Check(count == expected.size() && in_order,
                      "Subscribe (after_seq 0) delivered created, joined, kicked in seq order",
                      seen.empty() ? "nothing" : seen);
    // gRPC reports CANCELLED for a call cancelled after it failed too, so the check counts only
    // when the stream was live (it had delivered every action and was still open).
    stream_context->TryCancel();
    while (reader->Read(&message)) {
    }
    grpc::Status status = reader->Finish();
    Check(live && status.error_code() == grpc::StatusCode::CANCELLED,
          "the live stream ends CANCELLED after TryCancel()",
          live ? Describe(status) : "the stream was not live before the cancel; " + Describe(status));
  }

  // After the cancel, the channel still serves a call.
  {
    mv1::GetUserRequest request;
    request.set_uid("cpp-joiner");
    mv1::GetUserResponse response;
    auto context = caller.Context("");
    grpc::Status status = caller.stub->GetUser(context.get(), request, &response);
    Check(status.ok() && response.user().name() == "Joiner", "GetUser after the cancel",
          status.ok() ? "name " + response.user().name() : Describe(status));
  }

  // The connection has authenticated the key by now; a call without one is still refused.
  GetUserWithoutKey(caller, "after keyed calls on the same connection");

  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 && passed > 0 ? 0 : 1;
}
