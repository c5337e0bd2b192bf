// A draft of the same controller with the signs of the x and v terms flipped.
function control(x, v, theta, omega) {
  return 40 * theta + 5 * omega - x - v;
}
