// gRPC C++ Echo load generator for bench/grpc.py: the async completion-queue API, one
// completion queue polled by the main thread (the process is pinned to one core).
//
//   echo-client PORT CONNS DEPTH SECONDS
//
// Opens CONNS channels to 127.0.0.1:PORT, each its own TCP connection (a distinct
// grpc.channel_id and a local subchannel pool, so gRPC does not share one subchannel between
// them), keeps DEPTH Echo calls (16-byte payload) in flight on each, runs 1 s of warm-up that
// is not counted, then measures SECONDS. Prints one JSON line:
//
//   {"count":N,"calls_per_s":X,"p50_us":...,"p99_us":...,"client_us_per_call":...,"total_count":T}
//
// count, calls/s and the latencies cover the calls that completed in the measured window;
// client_us_per_call is this process's CPU (getrusage RUSAGE_SELF, every thread) over that
// window divided by count. total_count is every call the process completed (warm-up and the
// calls still in flight when the window closed included), for dividing the server's CPU over
// the whole run. Exits 1 if any call fails.
//
// Kept light so that it measures the server: no per-call deadline (no timer per call),
// retries off (no retry filter on the call path), the request built once, latencies kept in a
// preallocated array and sorted once at the end.

#include <grpcpp/grpcpp.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "echo.grpc.pb.h"

namespace {

using benchgrpc::v1::Echo;
using benchgrpc::v1::EchoRequest;
using benchgrpc::v1::EchoResponse;
using Clock = std::chrono::steady_clock;

struct Slot {
  Echo::Stub* stub = nullptr;
  std::optional<grpc::ClientContext> context;  // one per call: a ClientContext is not reusable
  std::unique_ptr<grpc::ClientAsyncResponseReader<EchoResponse>> reader;  // lives in the call's arena
  EchoResponse response;
  grpc::Status status;
  Clock::time_point started;

  void Release() {
    reader.reset();  // before the context, which frees the call (and its arena)
    context.reset();
  }

  void Start(const EchoRequest& request, grpc::CompletionQueue* cq) {
    Release();
    context.emplace();
    started = Clock::now();
    reader = stub->PrepareAsyncEcho(&*context, request, cq);
    reader->StartCall();
    reader->Finish(&response, &status, this);
  }
};

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s PORT CONNS DEPTH SECONDS\n", argv[0]);
    return 2;
  }
  const std::string target = std::string("127.0.0.1:") + argv[1];
  const int conns = std::atoi(argv[2]);
  const int depth = std::atoi(argv[3]);
  const double seconds = std::atof(argv[4]);
  if (conns < 1 || depth < 1 || !(seconds > 0)) {
    std::fprintf(stderr, "echo-client: CONNS and DEPTH must be at least 1, SECONDS above 0\n");
    return 2;
  }

  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<std::unique_ptr<Echo::Stub>> stubs;
  for (int i = 0; i < conns; i++) {
    grpc::ChannelArguments args;
    args.SetInt("grpc.channel_id", i);
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
    channels.push_back(grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
    if (!channels.back()->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
      std::fprintf(stderr, "echo-client: cannot connect to %s\n", target.c_str());
      return 1;
    }
    stubs.push_back(Echo::NewStub(channels.back()));
  }

  EchoRequest request;
  request.set_payload("0123456789abcdef");  // 16 bytes, the payload of bench/echo.py
  grpc::CompletionQueue cq;
  std::vector<Slot> slots(static_cast<size_t>(conns) * depth);
  for (size_t i = 0; i < slots.size(); i++) slots[i].stub = stubs[i % conns].get();

  const auto begin = Clock::now();
  const auto warm = begin + std::chrono::seconds(1);
  const auto end = warm + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::vector<uint32_t> latencies_ns;
  latencies_ns.reserve(static_cast<size_t>(seconds * 200000) + 1024);
  bool measuring = false, running = true;
  Clock::time_point measure_start, measure_end;
  double cpu_start = 0, cpu_end = 0;
  uint64_t total = 0, failed = 0;
  size_t in_flight = slots.size();
  std::string first_error;

  for (Slot& slot : slots) slot.Start(request, &cq);

  void* tag = nullptr;
  bool ok = false;
  while (in_flight > 0 && cq.Next(&tag, &ok)) {
    Slot* slot = static_cast<Slot*>(tag);
    const auto now = Clock::now();
    in_flight--;
    if (!ok || !slot->status.ok()) {
      if (failed++ == 0) first_error = ok ? slot->status.error_message() : "completion not ok";
      running = false;
      continue;
    }
    total++;
    if (running) {
      if (!measuring && now >= warm) {
        measuring = true;
        measure_start = now;
        cpu_start = CpuSeconds();
      }
      if (measuring) {
        if (now >= end) {
          running = false;  // the window is closed; the calls in flight drain uncounted
          measure_end = now;
          cpu_end = CpuSeconds();
        } else {
          const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now - slot->started).count();
          latencies_ns.push_back(static_cast<uint32_t>(std::min<int64_t>(ns, UINT32_MAX)));
        }
      }
    }
    if (running) {
      slot->Start(request, &cq);
      in_flight++;
    }
  }
  for (Slot& slot : slots) slot.Release();
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }

  if (failed > 0) {
    std::fprintf(stderr, "echo-client: %llu calls failed, the first with: %s\n",
                 static_cast<unsigned long long>(failed), first_error.c_str());
    return 1;
  }
  const size_t count = latencies_ns.size();
  if (count == 0) {
    std::fprintf(stderr, "echo-client: no call completed in the measured window\n");
    return 1;
  }
  std::sort(latencies_ns.begin(), latencies_ns.end());
  const double elapsed = std::chrono::duration<double>(measure_end - measure_start).count();
  const double p50 = latencies_ns[count / 2] / 1e3;
  const double p99 = latencies_ns[std::min(count - 1, count * 99 / 100)] / 1e3;
  std::printf(
      "{\"count\":%zu,\"calls_per_s\":%.1f,\"p50_us\":%.1f,\"p99_us\":%.1f,\"client_us_per_call\":%.2f,"
      "\"total_count\":%llu}\n",
      count, count / elapsed, p50, p99, (cpu_end - cpu_start) * 1e6 / count, static_cast<unsigned long long>(total));
  return 0;
}
