// SPDX-License-Identifier: GPL-2.0
/*
 * A minimal module for modsign's real-kernel conformance tests: it only logs a line when
 * it is loaded and unloaded.  tools/build-test-kernel builds it out of tree (M=) against the
 * conformance kernel; the harness then signs copies of it in every form under test.
 */
#include <linux/init.h>
#include <linux/module.h>
#include <linux/printk.h>

static int __init modsign_test_init(void)
{
	pr_info("modsign_test: loaded\n");
	return 0;
}

static void __exit modsign_test_exit(void)
{
	pr_info("modsign_test: unloaded\n");
}

module_init(modsign_test_init);
module_exit(modsign_test_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("modsign conformance test module");
