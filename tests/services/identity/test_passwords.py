"""The timing equaliser's stored hash: made with the production hasher's parameters, so a
sign-in for an unknown account costs what a real check costs."""

from __future__ import annotations

from argon2 import PasswordHasher

from app.services.identity import passwords


def test_the_equaliser_hash_has_the_production_parameters():
    production = PasswordHasher()  # what app.services.identity.passwords uses outside tests
    assert not production.check_needs_rehash(passwords.TIMING_EQUALISER_HASH)
    assert production.verify(passwords.TIMING_EQUALISER_HASH, passwords.TIMING_EQUALISER)


def test_the_equaliser_hash_is_not_a_cheap_one():
    cheap = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
    assert PasswordHasher().check_needs_rehash(cheap.hash(passwords.TIMING_EQUALISER))
