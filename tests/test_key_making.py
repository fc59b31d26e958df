"""The key tool's primes (peers/signing/new_key.py): a gcd rules out every candidate with a
prime factor below 2,000, and Miller-Rabin's 5 rounds decide the rest; primes known to be
prime pass, composites whose factors are all above the sieve do not."""
from peers.signing import new_key


def test_the_sieve_is_the_product_of_exactly_the_odd_primes_below_2000():
    odd_primes = [n for n in range(3, 2000, 2) if all(n % d for d in range(2, n))]
    assert len(odd_primes) == 302 and new_key.SMALL_PRIMES == __import__("math").prod(odd_primes)


def test_known_primes_pass_and_composites_the_sieve_cannot_see_fail():
    mersenne = [2**521 - 1, 2**607 - 1, 2**1279 - 1]  # primes, of the sizes around a key's
    assert all(new_key._probably_prime(prime) for prime in mersenne)
    beyond_the_sieve = [2003 * 2011, 2017 * 2027 * 2029, (2**521 - 1) * (2**607 - 1), 2**1024 + 1]
    carmichael = [561, 41041, 825265]  # Fermat's test is fooled by every base coprime to them
    for composite in beyond_the_sieve + carmichael:
        assert not new_key._probably_prime(composite), composite


def test_a_new_key_has_the_size_and_exponent_asked_and_signs_what_its_public_half_checks():
    key = new_key.new_private_key()
    first, second = key.primes
    assert key.n == first * second and key.n.bit_length() == 2048 and key.e == 65537
    assert pow(pow(12345, key.d, key.n), key.e, key.n) == 12345
