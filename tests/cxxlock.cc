// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cxxlock: threads take turns on a namespace-scoped std::mutex, a C++
 * global in .bss whose symbol is mangled (_ZN8cxxlocks10table_lockE).
 * A large object before it puts the mutex in the anonymous mapping
 * that continues the image's .bss.
 *
 *   cxxlock [-t THREADS] [-n LOOPS] [-h HOLD_US]
 *
 * Prints one JSON object: pid and the mutex's address.
 */
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>
#include <unistd.h>

namespace cxxlocks
{
char ballast[256 << 10];
std::mutex table_lock;
} // namespace cxxlocks

static std::atomic<int> go;
static long loops = 2000, hold_us = 20;

static void busy(long us)
{
	auto end = std::chrono::steady_clock::now() +
		   std::chrono::microseconds(us);

	while (std::chrono::steady_clock::now() < end)
		;
}

static void worker()
{
	while (!go.load())
		;
	for (long i = 0; i < loops; i++) {
		{
			std::lock_guard<std::mutex> g(cxxlocks::table_lock);
			cxxlocks::ballast[i % sizeof(cxxlocks::ballast)]++;
			busy(hold_us);
		}
		busy(hold_us / 4);
	}
}

int main(int argc, char **argv)
{
	std::vector<std::thread> threads;
	int opt, n = 4;

	while ((opt = getopt(argc, argv, "t:n:h:")) != -1) {
		switch (opt) {
		case 't':
			n = atoi(optarg);
			break;
		case 'n':
			loops = atol(optarg);
			break;
		case 'h':
			hold_us = atol(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: cxxlock [-t THREADS] [-n LOOPS] "
				"[-h HOLD_US]\n");
			return 2;
		}
	}
	if (n < 1 || n > 64 || loops < 1 || hold_us < 0)
		return 2;
	for (int i = 0; i < n; i++)
		threads.emplace_back(worker);
	go.store(1);
	for (auto &t : threads)
		t.join();
	printf("{\"pid\": %d, \"address\": \"0x%" PRIxPTR "\"}\n", getpid(),
	       (uintptr_t)&cxxlocks::table_lock);
	return 0;
}
