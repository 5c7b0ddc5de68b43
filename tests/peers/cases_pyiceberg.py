"""stub"""

from tests.peers.model import Case

CASES: list[Case] = []
