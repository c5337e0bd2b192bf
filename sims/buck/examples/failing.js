// Buck converter (docs/plants/buck.md), the failing example: open loop, the
// duty that gives 5 V from the default 12 V supply, 5/12, from the first
// tick on. In steady state it would be right (v = d·V_in), but the output
// filter is a lightly damped LC circuit (Q = 10 at 10 Ω): switched on at
// full duty from an empty capacitor, the voltage rings up to nearly twice
// its final value and passes the 7 V overvoltage limit within the first
// quarter of a millisecond on the default scenario. It ignores v and i, so
// it could not follow another V_in or the load step either.
//
// The arithmetic is plain doubles, so that the same law in
// sims/buck/buck_test.cc gives the same bits.
function control(v, i) {
  return 5 / 12;
}
