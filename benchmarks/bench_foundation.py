"""Foundation cases: building gridworld models, and the home page's warm rerun."""

from benchmarks import case, page_rerun
from rlviz.envs import cliff_walking, gridworld

BIG = "\n".join(["S" + "." * 49] + ["." * 50] * 48 + ["." * 49 + "G"])


@case("gridworld 50x50, slip 0.2: build the model", group="foundation", budget=0.05)
def build_big_grid():
    return gridworld(BIG, slip=0.2)


@case("cliff 4x12: build the model", group="foundation", budget=0.01)
def build_cliff():
    return cliff_walking()


page_rerun("home")
