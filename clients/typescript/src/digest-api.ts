// The digests of docs/run-records.md over wire JSON, for callers that keep or verify records.
export {
  requestDigest, resultDigest, recordDigest, policyDigest, sessionDigest,
  requestEncoding, resultEncoding, recordEncoding, policyEncoding, Encoder, wireFloat,
  REQUEST_DOMAIN, RESULT_DOMAIN, RECORD_DOMAIN, POLICY_DOMAIN, POLICY_FIELDS,
} from "./digest.js";
export { base64Decode, base64Encode, fromWire, toWire, hex } from "./bytes.js";
