// Package plimsoll is the Go client of plimsolld, the plimsoll sandbox daemon (clients/README.md
// is the cross-language contract).
//
// A client believes an answer only after checking it: at most the response cap, exactly one
// Plimsoll-Request-Id equal to the one it sent, a refusal's mark repeated by its header, and the
// run record (docs/run-records.md): the request digest recomputed from the request sent, the result
// digest from the answer, provider, tier and environment equal to the answer's, the tier meeting
// the floor, the record digest, and for session calls the chain. An answer that fails is a
// *Error with code data_loss and no "nothing ran" mark.
//
// A non-zero exit code is a Result, never an error. Errors are *Error; errors.Is(err, ErrRefused)
// matches the refusals that ran nothing and errors.Is(err, ErrDataLoss) the answers that were not
// believed.
package plimsoll
