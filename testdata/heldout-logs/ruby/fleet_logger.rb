# Logs the fleet's event script through Ruby's standard Logger with its default
# formatter, worded as wording/ruby.md says. Every process of every instance is a
# real forked process, so the "#pid" in each line is that process's own pid; the
# line's time is the script's virtual time through a Time.now hook (the way
# Timecop moves the clock), which Logger#add reads.
#
#   TZ=UTC ruby fleet_logger.rb SCRIPT_DIR OUT_DIR
require "json"
require "time"
require "logger"
require "fileutils"

script_dir, out_dir = ARGV
events = File.readlines(File.join(script_dir, "events.jsonl")).map { |l| JSON.parse(l) }
fleet = JSON.parse(File.read(File.join(script_dir, "fleet-truth.json")))
FileUtils.mkdir_p(out_dir)

module VirtualNow
  def now(*args)
    $vnow || super
  end
end
Time.singleton_class.prepend(VirtualNow)

PROGNAME = { "app" => "PaymentWorker", "consumer" => "PaymentWorker", "lock" => "RedisMutex",
             "idempotency" => "IdempotencyGuard", "payments" => "StripeGateway", "store" => "PaymentRecord",
             "notify" => "ReceiptMailer" }.freeze
SEVERITY = { "debug" => Logger::DEBUG, "info" => Logger::INFO, "warn" => Logger::WARN, "error" => Logger::ERROR }.freeze

def money(cents)
  format("%.2f", cents / 100.0)
end

def words(e)
  o = "##{e['order']}"
  case e["step"]
  when "start" then "Booting payment worker #{e['version']} (3 threads)"
  when "heartbeat" then "heartbeat processed=#{e['processed'] || 0}"
  when "received" then "Processing order #{o} msg_id=#{e['msg_id']} delivery=#{e['delivery']} redelivered=#{e['redelivered'] ? true : false}"
  when "lock_acquired" then "Locked #{e['lock_key']} token=#{e['token']} expires_in=#{e['ttl_ms'] / 1000.0}s"
  when "lock_busy" then "Lock #{e['lock_key']} taken, order #{o} will be retried"
  when "idem_check" then "No payment for #{e['idem_key']} yet (source=#{e['source']})"
  when "idem_seen" then "Order #{o} already paid, skipping"
  when "charge_start" then "Creating Stripe::Charge for order #{o}: #{money(e['amount'])} #{e['currency']}"
  when "charge" then "Stripe::Charge #{e['charge_id']} created for order #{o} (#{money(e['amount'])} #{e['currency']}, #{e['elapsed_ms']}ms)"
  when "charge_failed" then "Stripe::APIConnectionError for order #{o}: #{e['error']}"
  when "commit" then "Payment for order #{o} saved (key=#{e['idem_key']})"
  when "commit_failed" then "ActiveRecord::StatementInvalid saving payment for order #{o}: #{e['error']}"
  when "receipt_failed" then "Net::SMTPServerBusy sending receipt for order #{o}: #{e['error']}"
  when "retry" then "Retrying order #{o} in #{(e['backoff_ms'] / 1000.0).round(1)}s (attempt #{e['attempt']})"
  when "lock_released" then e["token"] ? "Unlocked #{e['lock_key']} token=#{e['token']}" : "Unlocked #{e['lock_key']}"
  when "lock_release_failed" then "Unlock of #{e['lock_key']} failed: #{e['error']}"
  when "nack" then "Requeued order #{o} msg_id=#{e['msg_id']}: #{e['error']}"
  when "ack" then "Acked msg_id=#{e['msg_id']}"
  else raise "no wording for #{e['step']}"
  end
end

pids = Hash.new { |h, k| h[k] = [] }
fleet["instances"].each do |inst|
  path = File.join(out_dir, "#{inst['host']}.log")
  File.write(path, "")
  mine = events.select { |e| e["instance"] == inst["id"] && !e["silent"] }
  mine.chunk_while { |a, b| a["pid"] == b["pid"] }.each do |process_events|
    r, w = IO.pipe
    child = fork do
      r.close
      logger = Logger.new(File.open(path, "a").tap { |f| f.sync = true })
      logger.level = Logger::DEBUG
      process_events.each do |e|
        $vnow = Time.iso8601(e["t"]).localtime
        logger.add(SEVERITY[e["level"]], words(e), PROGNAME[e["component"]])
      end
      w.write(Process.pid.to_s)
      exit!(0)
    end
    w.close
    pids[inst["host"]] << r.read.to_i
    Process.wait(child)
    raise "child failed" unless $?.success?
  end
end

files = fleet["instances"].map { |i| "#{i['host']}.log" }.sort
manifest = {
  name: "ruby-logger", ecosystem: "ruby", library: "logger (Ruby #{RUBY_VERSION} stdlib)",
  layout: "Logger default formatter: 'I, [time #pid]  INFO -- progname: message'",
  placement: "per-instance", clock: "virtual (a Time.now hook, as Timecop does)", files: files,
  workers: pids.flat_map { |host, ps| [host] + ps.map(&:to_s) },
  threads: [], loggers: PROGNAME.values.uniq.sort, other: []
}
File.write(File.join(out_dir, "manifest.json"), JSON.pretty_generate(manifest) + "\n")
