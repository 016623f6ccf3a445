"""Named layouts for ``rlviz.envs.gridworld`` (legend in ``rlviz.envs.LEGEND``)."""

from __future__ import annotations

__all__ = ["LAYOUTS"]

LAYOUTS: dict[str, str] = {
    # Sutton & Barto, Example 4.1 / Figure 4.1: two terminal corners, -1 on every move.
    # The start marker only says where rollouts begin; every non-terminal cell is a state.
    "sutton_barto_4x4": """
        G...
        .S..
        ....
        ...G
    """,
    # Sutton & Barto, Example 6.6.
    "cliff": """
        ............
        ............
        ............
        SCCCCCCCCCCG
    """,
    # Four rooms joined by doorways (after Sutton, Precup & Singh, 1999).
    "four_rooms": """
        #############
        #.....#.....#
        #.....#.....#
        #...........#
        #.....#.....#
        #.....#.....#
        ##.####.....#
        #.....###.###
        #.....#.....#
        #.....#.....#
        #S..........#
        #.....#....G#
        #############
    """,
    # A narrow bridge over holes: the short way is risky once the ice is slippery.
    "bridge": """
        HHHHHHHHH
        S.......G
        HHHHHHHHH
        .........
        .........
    """,
    # A maze whose values flow around corners one sweep at a time.
    "maze": """
        S.#.......
        .##.####.#
        ....#....#
        ###.#.####
        ....#.....
        .####.###.
        .#....#...
        .#.####.#.
        ...#....#G
    """,
    # A long corridor: how far the goal's value reaches depends on gamma.
    "corridor": """
        S..................G
    """,
}
