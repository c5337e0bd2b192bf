"""The nine plants as their replay pages describe them: what each trajectory column is (named and
with units as docs/plants/NAME.md gives them), the tick and the trial's length, the passing rule
(src/trial/plant_examples_test.cc: the trial finishes and the score reaches the rule's score), and
how fast the replay plays (plant seconds per second of wall time: the plant's own tick rate where a
trial lasts seconds, scaled where it lasts microseconds or years).

A column is (symbol, meaning, unit); the state's columns come first, then the inputs, in the
trajectory row's order (docs/exams.md). `guides` draw horizontal lines on a column's chart (a target
band, a limit); `heatmap` names a run of columns drawn as one image (the double slit's 64 bins);
`clock` names the time the ticks count where it is not plain time (proper time: twin, blackhole).
`math_calls` names the math library functions the passing example calls (Math.cos in JavaScript,
cos in C): where there are none, its law is + − × ÷, sqrt, min, max and abs, which WebAssembly and
JavaScript round alike, so the C and JavaScript trajectories must be the same bits; where there are
some, identical bits are measured, not promised (src/trial/controller/c_controller_test.cc).
plant_replays.py checks every column count against the runner's `row_doubles`, and every tick
against the runner's `ended_at_seconds` / `ticks`.
"""


def _plant(name, title, goal, scenario, tick, end, passing, rule, state, inputs, speed,
           time_unit=("s", 1.0), guides=None, heatmap=None, claims=(), clock=("t", ""),
           math_calls=()):
    return {"name": name, "title": title, "doc": f"docs/plants/{name}.md", "goal": goal,
            "scenario": scenario, "tick_seconds": tick, "end_seconds": end,
            "passing_score": passing, "rule": rule,
            "columns": [{"symbol": s, "meaning": m, "unit": u, "input": False} for s, m, u in state]
                       + [{"symbol": s, "meaning": m, "unit": u, "input": True} for s, m, u in inputs],
            "replay_speed": speed, "time_unit": {"symbol": time_unit[0], "seconds": time_unit[1]},
            "guides": guides or {}, "heatmap": heatmap, "claims": list(claims),
            "clock": {"symbol": clock[0], "note": clock[1]}, "math_calls": list(math_calls)}


YEAR = 31557600.0  # the Julian year the twin plant's tick is a hundredth of (315576 s)

PLANTS = [
    _plant("cartpole", "Cart-pole balance",
           "keep a pole hinged on a cart upright for 20 s by pushing the cart (at most 20 N)",
           "the pole released from rest at θ = 0.05 rad, the cart still at the origin",
           0.01, 20.0, 20.0, "the trial finishes with score 20 (seconds balanced: all 2000 ticks)",
           [("x", "cart position", "m"), ("v", "cart velocity", "m/s"),
            ("θ", "pole angle from upright", "rad"), ("ω", "pole angular velocity", "rad/s")],
           [("F", "force on the cart, as applied (clamped to ±20 N)", "N")],
           1.0, guides={"θ": [[1.5707963267948966, "π/2: fallen"], [-1.5707963267948966, "−π/2"]]},
           claims=["The model is Barto, Sutton & Anderson's frictionless cart-pole with forward "
                   "Euler (1 ms substeps): an idealisation, not a physical cart."]),
    _plant("shower", "Shower temperature",
           "bring the shower head to 38 °C through a 2 s pipe delay and hold it, never above 50 °C",
           "15 °C cold and 60 °C hot supply, the valve shut, the pipe and head at 15 °C",
           0.1, 60.0, 0.9,
           "the trial finishes (600 ticks, no scalding) with score ≥ 0.9: within 38 ± 1 °C for "
           "90 % of the last 40 s",
           [("T_head", "shower-head temperature", "°C"), ("a", "valve opening (hot fraction)", "1")],
           [("c", "commanded opening, as applied (clamped to [0, 1])", "1")],
           2.0, guides={"T_head": [[37, "37"], [39, "39"], [50, "50: scald"]]},
           claims=["Perfect mixing, a fixed pipe delay, a head that is one first-order lag: "
                   "a textbook model, not a physical shower."]),
    _plant("ship", "Ship heading",
           "bring a ship to course 30° with a slow rudder, in waves, and hold it for the last 200 s",
           "heading 0°, not turning, waves of amplitude 0.2 °/s",
           0.1, 300.0, 0.9,
           "the trial finishes (3000 ticks) with score ≥ 0.9: within 30 ± 2° for 90 % of the last "
           "200 s",
           [("ψ", "heading", "°"), ("r", "yaw rate", "°/s"), ("δ", "rudder angle (actual)", "°")],
           [("c", "commanded rudder angle, as applied (clamped to ±35°)", "°")],
           10.0, guides={"ψ": [[28, "28"], [32, "32"]]},
           claims=["Nomoto's first-order yaw model with sinusoidal waves: a textbook model, "
                   "not a ship."]),
    _plant("buck", "Buck converter",
           "bring a buck converter's output to 5 V and hold it within ± 0.1 V through a load step "
           "at 10 ms",
           "12 V in, an empty output, a 0.5 A load that becomes 2 A at 10 ms",
           1e-5, 0.03, 0.9,
           "the trial finishes (3000 ticks) with score ≥ 0.9: within 5 ± 0.1 V for 90 % of the "
           "last 25 ms",
           [("v", "output voltage", "V"), ("i", "inductor current", "A")],
           [("d", "duty cycle, as applied (clamped to [0, 1])", "1")],
           0.001, time_unit=("ms", 1e-3), guides={"v": [[4.9, "4.9"], [5.1, "5.1"]]},
           claims=["The averaged continuous-conduction model: no switching ripple, ideal "
                   "components, not a circuit on a bench."]),
    _plant("swingup", "Cart-pole swing-up",
           "swing a hanging pole up by moving the cart (at most 10 N, a track with ends), catch it "
           "and hold it up for the last 10 s",
           "the cart at the centre of the track, the pole hanging at rest (θ = π)",
           0.01, 30.0, 0.85,
           "the trial finishes (3000 ticks, on the track) with score ≥ 0.85: within 0.2 rad of "
           "upright for 85 % of the last 10 s",
           [("x", "cart position", "m"), ("v", "cart velocity", "m/s"),
            ("θ", "pole angle from upright, unwrapped", "rad"),
            ("ω", "pole angular velocity", "rad/s")],
           [("F", "force on the cart, as applied (clamped to ±10 N)", "N")],
           1.0, math_calls=["cos"],
           claims=["The cart-pole model of cartpole.md with a shorter track and a weaker motor: "
                   "a textbook model, not a physical pendulum."]),
    _plant("blackhole", "Black-hole orbit",
           "move a rocket from a circular orbit around a Schwarzschild black hole to a target orbit "
           "and hold it there, on a Δv budget",
           "the circular orbit at r = 10 M, target 7 M, fuel 0.1",
           0.001, 3.0, 0.9,
           "the trial finishes (3000 ticks) with score ≥ 0.9: within 0.05 M of the target radius "
           "with |u_r| ≤ 0.002 for 90 % of the last 1000 M",
           [("r", "radius", "M"), ("u_r", "radial velocity", "c"), ("φ", "orbital angle", "rad"),
            ("L", "angular momentum", "M"), ("E", "energy", "1"), ("fuel", "Δv left", "c"),
            ("r_target", "target radius", "M")],
           [("a_r", "radial thrust, as applied", "1/M"),
            ("a_φ", "tangential thrust, as applied", "1/M")],
           0.1, time_unit=("M", 1e-3),
           clock=("τ", "The plant's clock is the rocket's proper time: a tick is 1 M of it, which "
                       "the runner reports as 1 ms."),
           claims=["Times are in M, the hole's mass in geometric units; the runner counts 1 ms per "
                   "M. Schwarzschild geodesics with small thrusts: a model, not an observation."]),
    _plant("twin", "Twin-paradox rocket",
           "fly to a star, stop there, come home to rest before the deadline, on a rapidity budget, "
           "ageing as little as possible",
           "a star 4 ly away, a rapidity budget of 6, home within 20 Earth years",
           315576.0, 946728000.0, 0.25,
           "the trial finishes (home at rest after stopping at the star, before the deadline) with "
           "score ≥ 0.25: the traveller aged at most 75 % of Earth's time",
           [("t", "Earth time", "yr"), ("τ", "the traveller's proper time", "yr"),
            ("x", "position", "ly"), ("η", "rapidity (β = tanh η)", "1"),
            ("fuel", "rapidity budget left", "1"), ("D", "the star's distance", "ly"),
            ("visited", "has stopped at the star", "0 or 1")],
           [("a", "proper acceleration, as applied", "ly/yr²")],
           YEAR, time_unit=("yr", YEAR), math_calls=["acosh"],
           clock=("τ", "The plant's clock is the traveller's proper time: a tick is 0.01 yr of it "
                       "(the runner's seconds are proper time); Earth time is the column t."),
           claims=["Special relativity in one dimension with an ideal rocket: a thought "
                   "experiment, not a flight."]),
    _plant("satclock", "Satellite clock",
           "steer a navigation satellite's clock to ground time through a delayed, noisy "
           "measurement and hold it within ± 10 ns",
           "GPS altitude, 3000 ns ahead, drifting 0.325 ns/s, a 5-tick measurement delay, 2 ns "
           "noise",
           60.0, 180000.0, 0.9,
           "the trial finishes (3000 ticks) with score ≥ 0.9: the true offset within ± 10 ns for "
           "90 % of the last 38 h",
           [("z", "measured offset (delayed, noisy)", "ns"),
            ("u_last", "steer applied on the last tick", "ns/s")],
           [("u", "frequency steer, as applied", "ns/s")],
           7200.0, time_unit=("h", 3600.0), guides={"z": [[10, "+10"], [-10, "−10"]]},
           claims=["The score counts the true offset, which the trajectory does not hold: the "
                   "chart shows the measured one, delayed and noisy.",
                   "Relativity and an ageing oscillator in a closed form: a model, not a "
                   "satellite."]),
    _plant("doubleslit", "Double slit (16 phased sources)",
           "steer 16 coherent sources' phases so that the most light falls in a window of 5 angle "
           "bins around the target, against unknown phase errors and drift",
           "spacing d/λ = 0.5, target bin 40, errors over a full turn, seed 2026",
           0.01, 6.0, 0.7,
           "the trial finishes (600 ticks) with score ≥ 0.7: on average 70 % of the power in the 5 "
           "target bins over the last 4 s",
           [(f"I_{j}", f"intensity in angle bin {j}", "1") for j in range(64)]
           + [("j0", "target bin", "bin"), ("d/λ", "source spacing", "λ")],
           [(f"φ_{k}", f"phase of source {k}, as applied", "rad") for k in range(16)],
           0.25, heatmap={"first": 0, "count": 64, "title": "I_0 … I_63, intensity per angle bin",
                          "unit": "1 (an ideal array's peak)", "window_column": 64},
           claims=["Far-field interference of point sources with scalar waves: a model, not an "
                   "optical bench."]),
]

BY_NAME = {plant["name"]: plant for plant in PLANTS}
