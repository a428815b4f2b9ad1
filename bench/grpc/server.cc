// gRPC C++ Echo server for bench/grpc.py: the async completion-queue API with one completion
// queue polled by one thread (the process is pinned to one core), the counterpart of our
// server's one event loop.
//
//   echo-server PORT        listens on 127.0.0.1:PORT (insecure), prints "listening" when
//                           ready, exits 0 on SIGTERM or SIGINT
//
// Each call is one heap object: its ServerContext, request, response and responder, moving
// from "requested" to "finishing" to deleted, as in gRPC's own async examples and its qps
// benchmark server. Enough calls are requested up front that a call is always waiting for
// every stream the load can have in flight (4 × 32 in the benchmark).

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "echo.grpc.pb.h"

namespace {

using benchgrpc::v1::Echo;
using benchgrpc::v1::EchoRequest;
using benchgrpc::v1::EchoResponse;

constexpr int kRequestedCalls = 256;

// Set before the server shuts down: calls are no longer re-requested, so nothing new is
// queued on the completion queue once the shutdown has begun.
std::atomic<bool> stopping{false};

class Call {
 public:
  Call(Echo::AsyncService* service, grpc::ServerCompletionQueue* cq)
      : service_(service), cq_(cq), responder_(&context_) {
    service_->RequestEcho(&context_, &request_, &responder_, cq_, cq_, this);
  }

  // One completion for this call's tag: the request arrived (ok) or the server is shutting
  // down (!ok), then the response went out (or the call was cancelled).
  void Proceed(bool ok) {
    if (finishing_ || !ok) {
      delete this;
      return;
    }
    if (!stopping.load(std::memory_order_relaxed)) new Call(service_, cq_);  // keeps kRequestedCalls waiting
    response_.mutable_payload()->swap(*request_.mutable_payload());
    finishing_ = true;
    responder_.Finish(response_, grpc::Status::OK, this);
  }

 private:
  Echo::AsyncService* service_;
  grpc::ServerCompletionQueue* cq_;
  grpc::ServerContext context_;
  EchoRequest request_;
  EchoResponse response_;
  grpc::ServerAsyncResponseWriter<EchoResponse> responder_;
  bool finishing_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s PORT\n", argv[0]);
    return 2;
  }
  const std::string address = std::string("127.0.0.1:") + argv[1];

  // SIGTERM/SIGINT are blocked in every thread (gRPC's threads inherit the mask) and taken by
  // one thread with sigwait, which shuts the server down from outside a signal handler.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Echo::AsyncService service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  // No health-check service and no reflection (both off by default): the server serves Echo
  // only. The HTTP/2 settings stay at gRPC's defaults (no limit on concurrent streams, BDP
  // probing on), as a deployed gRPC server would have them.
  std::unique_ptr<grpc::ServerCompletionQueue> cq = builder.AddCompletionQueue(/*is_frequently_polled=*/true);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    std::fprintf(stderr, "echo-server: cannot listen on %s\n", address.c_str());
    return 1;
  }

  for (int i = 0; i < kRequestedCalls; i++) new Call(&service, cq.get());

  std::thread stopper([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    stopping = true;
    // Lets calls in flight finish for up to a second, cancels the rest, then ends the queue.
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    cq->Shutdown();
  });

  std::printf("listening\n");
  std::fflush(stdout);

  void* tag = nullptr;
  bool ok = false;
  while (cq->Next(&tag, &ok)) static_cast<Call*>(tag)->Proceed(ok);

  stopper.join();
  server.reset();
  return 0;
}
