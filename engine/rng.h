// The Rng port and the one algorithm rcsim uses everywhere: mt19937_64 with our own distributions, so
// that a seed gives the same numbers with every standard library. Never std::random_device in the sim.
#ifndef RCSIM_ENGINE_RNG_H_
#define RCSIM_ENGINE_RNG_H_

#include <cstdint>
#include <random>

#include "engine/time.h"

namespace rcsim {

// Not thread-safe: one Rng per thread of use.
class Rng {
 public:
  virtual ~Rng() = default;
  virtual uint64_t Next() = 0;  // uniform over [0, 2^64)

  // Uniform in [0, n); n > 0. Unbiased (rejection sampling).
  uint64_t Below(uint64_t n);
  // Uniform in [lo, hi] inclusive.
  int64_t Between(int64_t lo, int64_t hi);
  // Uniform in [0, 1).
  double Unit();
  bool Bernoulli(double p) { return p > 0 && Unit() < p; }
  Duration Uniform(Duration lo, Duration hi) { return Duration(Between(lo.count(), hi.count())); }
};

class Mt19937Rng final : public Rng {
 public:
  explicit Mt19937Rng(uint64_t seed) : gen_(seed) {}
  uint64_t Next() override { return gen_(); }

 private:
  std::mt19937_64 gen_;
};

// SplitMix64 step: derives independent seeds from one (swarm mode, per-component streams).
uint64_t DeriveSeed(uint64_t seed, uint64_t stream);

}  // namespace rcsim

#endif  // RCSIM_ENGINE_RNG_H_
