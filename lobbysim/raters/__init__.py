"""Raters: per-player skill estimates updated from finished games, behind one protocol and registry.

A rater keeps one state row per player id (numpy arrays indexed by id, grown by doubling) and
turns :class:`~lobbysim.records.rows.GameResult` records into new estimates. The simulator feeds
every
rater the games that finished since its last matchmaking pass in one :meth:`Rater.update` call;
the result equals applying the games one at a time in the given order. For speed a batch is
split into maximal *waves* of consecutive games with no rated player in common: within a wave no
game reads what another writes, so each wave is computed with a few vectorised numpy calls.
An update is all or nothing: if any game is rejected, no rating changes.

Four raters are registered in :data:`RATERS`, in this order:

* ``bayesian`` (:class:`BayesianRater`, :mod:`lobbysim.raters.bayesian`): the Gaussian beliefs of
  the paper (docs/model.md 3.1, the corrected TrueSkill form of
  :func:`lobbysim.skill.gaussian.update_1v1`); team and free-for-all games follow docs/model.md 3.4
  with the pair combination rule stated in :mod:`lobbysim.raters.bayesian`.
* ``sph_elo`` (:class:`SPHEloRater`, :mod:`lobbysim.raters.sph_elo`): the ZoneStats
  score-per-hour Elo of :mod:`lobbysim.skill.sph_elo` (docs/model.md 3.3); SPH decides every game,
  ``1v1`` included.
* ``glicko2`` (:class:`Glicko2Rater`, :mod:`lobbysim.raters.glicko2`): Glickman's Glicko-2,
  applied in rating periods of simulated time; team and ffa games as 1v1 results per pair.
* ``openskill`` (:class:`OpenSkillRater`, :mod:`lobbysim.raters.openskill`): an adapter for the
  optional ``openskill`` package's Weng-Lin models, on the true-skill scale (needs
  ``pip install 'lobbysim[openskill]'``; the package is imported only when the rater is built).

The protocol, the registry and the machinery the raters share (the player table, batch checks,
waves, exact SPH comparison) live in :mod:`lobbysim.raters.base`; the SPH Elo's pairs on arrays
(its predicted outcome, ordinary 1v1 games rated together) in
:mod:`lobbysim.raters.sph_elo_duels`. Importing this package registers every rater.

Raters are SimPy-free and do no I/O. Player ids are non-negative ints; an unknown id of a rated
(registered) seat, or in :meth:`Rater.means`, is a :class:`KeyError` naming the id.
"""

from lobbysim.raters.base import RATERS, Rater
from lobbysim.raters.bayesian import BayesianRater
from lobbysim.raters.sph_elo import SPHEloRater

# isort: split
# Registered after the two above (the registry keeps the order of registration).
from lobbysim.raters.glicko2 import Glicko2Rater
from lobbysim.raters.openskill import OpenSkillRater

__all__ = ["RATERS", "BayesianRater", "Glicko2Rater", "OpenSkillRater", "Rater", "SPHEloRater"]
