/*
 * The binary's entry point; all logic is in dispatch.c so that tests can call
 * tracebox_main() directly.
 */
#include "tracebox.h"

int main(int argc, char **argv)
{
	return tracebox_main(argc, argv);
}
