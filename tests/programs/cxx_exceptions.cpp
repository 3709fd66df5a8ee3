// SPDX-License-Identifier: MIT
/*
 * cxx_exceptions - throws and catches three known types, twice each, in
 * this order: std::runtime_error, a type of its own (demo::Oops), int; and
 * once rethrows a std::logic_error from a catch-all. No ctrace probe: what
 * --usdt cxx traces is libstdc++'s own (tests/integration/test_usdt.c).
 * Prints "done" at the end.
 */
#include <cstdio>
#include <stdexcept>

namespace demo {
struct Oops {
	int code;
};
} // namespace demo

static void rethrow_one()
{
	try {
		throw std::logic_error("inner");
	} catch (...) {
		throw;
	}
}

int main()
{
	for (int i = 0; i < 2; i++) {
		try {
			throw std::runtime_error("boom");
		} catch (const std::exception &) {
		}
		try {
			throw demo::Oops{ i };
		} catch (const demo::Oops &) {
		}
		try {
			throw 42;
		} catch (int) {
		}
	}
	try {
		rethrow_one();
	} catch (const std::logic_error &) {
	}
	std::puts("done");
	return 0;
}
