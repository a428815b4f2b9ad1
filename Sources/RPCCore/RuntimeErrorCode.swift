/// The `ERR_…` codes the RPC runtime itself puts in `Status.error_code` (`mrpc.v1.ErrorCode` in
/// proto/mrpc/v1/envelope.proto; services add their own), each named once so that the code that
/// sends one and the code that checks for it cannot drift apart.
public enum RuntimeErrorCode {}
