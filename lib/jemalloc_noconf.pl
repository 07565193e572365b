#!/usr/bin/perl
# jemalloc_noconf.pl ARCHIVE -- cuts the private jemalloc off the host
# program's configuration, in place.
#
# jemalloc reads its options from, in turn: its build, the malloc_conf
# symbol (renamed: ours alone), the link /etc/malloc.conf, the environment
# variable MALLOC_CONF, and malloc_conf_2_conf_harder (renamed).  The link
# and the variable belong to the host program and its own allocator: read
# by our copy, MALLOC_CONF=stats_print:true printed our arenas' statistics
# into the program's stderr, retain:false changed how the pinned pool
# grows, and a pair our jemalloc does not know printed "Invalid conf pair"
# (and with abort_conf:true, aborted the program).
#
# The two names sit side by side in jemalloc.o's string table, each ending
# with NUL and the first after a NUL.  Their first bytes become NUL: the
# code then asks getenv("") and readlink(""), which find nothing (glibc's
# getenv answers NULL for an empty name).  Same length, nothing moves.
# Exactly one such place must be found, or the build stops.
use strict;
use warnings;

my $file = shift or die "usage: $0 ARCHIVE\n";
open(my $in, '<:raw', $file) or die "$file: $!\n";
my $data = do { local $/; <$in> };
close($in);

my $from = "\0/etc/malloc.conf\0MALLOC_CONF\0";
my $to = "\0\0etc/malloc.conf\0\0ALLOC_CONF\0";
my $n = () = $data =~ /\Q$from\E/g;
if ($n != 1) {
	die "$0: $file: the configuration names of jemalloc found $n times, " .
	    "not once: this jemalloc is not the one this was written for " .
	    "(Debian's 5.3); see lib/jemalloc_noconf.pl\n";
}
$data =~ s/\Q$from\E/$to/;
open(my $out, '>:raw', $file) or die "$file: $!\n";
print $out $data or die "$file: $!\n";
close($out) or die "$file: $!\n";
