//! pcap / pcapng reading and writing.
