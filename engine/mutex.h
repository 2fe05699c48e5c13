// Mutex, MutexLock and CondVar (and RecursiveMutex): std::mutex and std::condition_variable as Clang's
// thread-safety analysis (-Wthread-safety, run by scripts/thread-safety) understands them, since libstdc++
// does not annotate its own. A Mutex is a std::mutex underneath, with the same cost and semantics (not
// recursive); the macros below expand to Clang attributes under clang and to nothing under GCC, so they never
// change the code.
//   Mutex mu_;
//   int count_ GUARDED_BY(mu_);         // read or written only with mu_ held
//   void Bump() REQUIRES(mu_);          // the caller holds mu_
//   void Add() EXCLUDES(mu_) { MutexLock lock(mu_); ++count_; cv_.NotifyAll(); }
//   cv_.Wait(mu_, [&]() REQUIRES(mu_) { return count_ > 0; });
// Thread-safety: Mutex and CondVar are safe for concurrent use (that is what they are for); a MutexLock
// belongs to the thread that made it.

#ifndef RCSIM_ENGINE_MUTEX_H_
#define RCSIM_ENGINE_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

// Abseil (which gRPC includes) defines THREAD_ANNOTATION_ATTRIBUTE__, GUARDED_BY, PT_GUARDED_BY,
// ACQUIRED_AFTER/BEFORE and NO_THREAD_SAFETY_ANALYSIS unconditionally: those keep Abseil's exact
// replacement lists, so either header may come first (an identical redefinition is allowed).
#if defined(__clang__)
#define THREAD_ANNOTATION_ATTRIBUTE__(x) __attribute__((x))
#else
#define THREAD_ANNOTATION_ATTRIBUTE__(x)
#endif

#define CAPABILITY(x) THREAD_ANNOTATION_ATTRIBUTE__(capability(x))
#define SCOPED_CAPABILITY THREAD_ANNOTATION_ATTRIBUTE__(scoped_lockable)
#define GUARDED_BY(x) THREAD_ANNOTATION_ATTRIBUTE__(guarded_by(x))
#define PT_GUARDED_BY(x) THREAD_ANNOTATION_ATTRIBUTE__(pt_guarded_by(x))
#define ACQUIRED_BEFORE(...) THREAD_ANNOTATION_ATTRIBUTE__(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) THREAD_ANNOTATION_ATTRIBUTE__(acquired_after(__VA_ARGS__))
#define REQUIRES(...) THREAD_ANNOTATION_ATTRIBUTE__(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) THREAD_ANNOTATION_ATTRIBUTE__(acquire_capability(__VA_ARGS__))
#define RELEASE(...) THREAD_ANNOTATION_ATTRIBUTE__(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) THREAD_ANNOTATION_ATTRIBUTE__(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) THREAD_ANNOTATION_ATTRIBUTE__(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) THREAD_ANNOTATION_ATTRIBUTE__(assert_capability(x))
#define RETURN_CAPABILITY(x) THREAD_ANNOTATION_ATTRIBUTE__(lock_returned(x))
// Turns the analysis off for one function; every use carries a comment saying why the analysis cannot
// follow that code.
#define NO_THREAD_SAFETY_ANALYSIS THREAD_ANNOTATION_ATTRIBUTE__(no_thread_safety_analysis)

namespace rcsim {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  [[nodiscard]] bool TryLock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis that the caller holds the lock (it checks nothing at run time).
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

  // BasicLockable / Lockable, for std::scoped_lock over several mutexes.
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  [[nodiscard]] bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex for its scope, like std::unique_lock: Unlock() and Lock() give it up and take it back
// in between (the destructor releases it only when held).
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mu_.Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() {
    mu_.Unlock();
    held_ = false;
  }
  void Lock() ACQUIRE() {
    mu_.Lock();
    held_ = true;
  }

 private:
  Mutex& mu_;
  bool held_ = true;
};

// A std::recursive_mutex, for the rare lock its holder may take again (a callback run under it that
// re-enters its owner). The analysis treats it as a plain capability: it does not see re-entry through
// a callback, and a direct second acquisition in one function is still reported.
class CAPABILITY("mutex") RecursiveMutex {
 public:
  RecursiveMutex() = default;
  RecursiveMutex(const RecursiveMutex&) = delete;
  RecursiveMutex& operator=(const RecursiveMutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }

 private:
  std::recursive_mutex mu_;
};

class SCOPED_CAPABILITY RecursiveMutexLock {
 public:
  explicit RecursiveMutexLock(RecursiveMutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~RecursiveMutexLock() RELEASE() { mu_.Unlock(); }
  RecursiveMutexLock(const RecursiveMutexLock&) = delete;
  RecursiveMutexLock& operator=(const RecursiveMutexLock&) = delete;

 private:
  RecursiveMutex& mu_;
};

// A std::condition_variable over a Mutex. Every wait takes the Mutex held (REQUIRES) and returns with it
// held; the predicate runs with it held, so a lambda predicate that reads guarded fields says
// REQUIRES(mu) itself. WaitFor/WaitUntil return the predicate's value when they give up.
class CondVar {
 public:
  void NotifyOne() noexcept { cv_.notify_one(); }
  void NotifyAll() noexcept { cv_.notify_all(); }

  // The bodies hand the already-held std::mutex to std::condition_variable, which unlocks and relocks
  // it inside; the analysis sees the capability held throughout, which is what the caller observes.
  void Wait(Mutex& mu) REQUIRES(mu) {
    Adopted lock(mu);
    cv_.wait(lock.lock);
  }
  template <typename Predicate>
  void Wait(Mutex& mu, Predicate pred) REQUIRES(mu) NO_THREAD_SAFETY_ANALYSIS {  // pred runs with mu held
    Adopted lock(mu);
    cv_.wait(lock.lock, std::move(pred));
  }
  // As std::condition_variable::wait_for: a wait until now + timeout on the steady clock.
  template <typename Rep, typename Period, typename Predicate>
  bool WaitFor(Mutex& mu, std::chrono::duration<Rep, Period> timeout, Predicate pred) REQUIRES(mu) {
    return WaitUntil(mu, std::chrono::steady_clock::now() + timeout, std::move(pred));
  }
  template <typename Clock, typename Duration>
  std::cv_status WaitUntil(Mutex& mu, std::chrono::time_point<Clock, Duration> deadline) REQUIRES(mu) {
    Adopted lock(mu);
    return cv_.wait_until(lock.lock, deadline);
  }
  template <typename Clock, typename Duration, typename Predicate>
  bool WaitUntil(Mutex& mu, std::chrono::time_point<Clock, Duration> deadline, Predicate pred)
      REQUIRES(mu) NO_THREAD_SAFETY_ANALYSIS {  // pred runs with mu held
    Adopted lock(mu);
    return cv_.wait_until(lock.lock, deadline, std::move(pred));
  }

 private:
  // A std::unique_lock over the held std::mutex that leaves it held when it goes (even when the
  // predicate throws: the caller's MutexLock still owns it).
  struct Adopted {
    explicit Adopted(Mutex& mu) : lock(mu.mu_, std::adopt_lock) {}
    ~Adopted() { lock.release(); }
    std::unique_lock<std::mutex> lock;
  };
  std::condition_variable cv_;
};

}  // namespace rcsim

#endif  // RCSIM_ENGINE_MUTEX_H_
