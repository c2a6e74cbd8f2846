// Hostileprobe measures, from outside, what hostile requests cost a running paymentsd: for
// each hostile body (package hostile), many concurrent requests at once, with the server's
// CPU time per answer and its peak memory (VmHWM); then the medians of interleaved requests
// failing authentication with an unknown platform id and with a known id's wrong signature.
//
//	paymentsd serve -rate-limit 0 -auth-failures 0 &
//	go run ./internal/hostileprobe -url http://127.0.0.1:8080 -platform ID -secret S -pid PID
//
// The server must run on this machine (its /proc entry is read) with a platform created,
// and without its limits: the probe sends far more than one platform may, and thousands
// of failing authentications from one address, to measure what they cost once admitted.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/httpserver"
	"github.com/platform-payments/payments/internal/hostile"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8080", "the server's base URL")
	platform := flag.String("platform", "", "a platform id of the server")
	secret := flag.String("secret", "", "the platform's secret")
	pid := flag.Int("pid", 0, "the server's process id")
	concurrency := flag.Int("c", 200, "concurrent requests per hostile body")
	timing := flag.Int("n", 1000, "requests of each kind for the timing medians")
	loopers := flag.Int("loopers", 4, "clients looping on the costliest body while small requests are timed")
	flag.Parse()
	if *platform == "" || *secret == "" || *pid == 0 {
		flag.Usage()
		os.Exit(2)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *concurrency}, Timeout: time.Minute}
	send := func(method, target, platformID, signature string, body []byte) (int, time.Duration) {
		req, err := http.NewRequest(method, *url+target, bytes.NewReader(body))
		if err != nil {
			log.Fatal(err)
		}
		req.Header.Set(payments.HeaderPlatformID, platformID)
		req.Header.Set(payments.HeaderSignature, signature)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		if cerr := resp.Body.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			log.Fatal(err)
		}
		return resp.StatusCode, time.Since(start)
	}

	fmt.Printf("server at start: VmHWM %d MB, VmRSS %d MB\n", memKB(*pid, "VmHWM")>>10, memKB(*pid, "VmRSS")>>10)
	fmt.Printf("%-16s %8s %6s %12s %12s %10s  %s\n", "body", "bytes", "n", "cpu/answer", "slowest", "VmHWM", "statuses")
	const target = "/api/platform/users/create"
	for _, hb := range hostile.Bodies(httpserver.MaxBodyBytes) {
		signature := payments.Sign(*secret, http.MethodPost, target, hb.Body)
		cpuBefore := cpuTicks(*pid)
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			statuses = map[int]int{}
			slowest  time.Duration
			start    = make(chan struct{})
		)
		for range *concurrency {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				status, took := send(http.MethodPost, target, *platform, signature, hb.Body)
				mu.Lock()
				statuses[status]++
				slowest = max(slowest, took)
				mu.Unlock()
			}()
		}
		close(start)
		wg.Wait()
		cpu := time.Duration(cpuTicks(*pid)-cpuBefore) * (time.Second / clockTicks)
		fmt.Printf("%-16s %8d %6d %12v %12v %7d MB  %v\n", hb.Name, len(hb.Body), *concurrency,
			(cpu / time.Duration(*concurrency)).Round(10*time.Microsecond), slowest.Round(time.Millisecond),
			memKB(*pid, "VmHWM")>>10, statuses)
	}

	// Interference: the median of small requests alone, then while clients loop on the
	// costliest hostile body.
	small := []byte(`{"name":"","email":"ada@example.com"}`)
	smallSig := payments.Sign(*secret, http.MethodPost, target, small)
	medianSmall := func(n int) time.Duration {
		var d []time.Duration
		for range n {
			_, took := send(http.MethodPost, target, *platform, smallSig, small)
			d = append(d, took)
		}
		return median(d)
	}
	alone := medianSmall(500)
	worst := hostile.Bodies(httpserver.MaxBodyBytes)[2] // unknown-keys
	worstSig := payments.Sign(*secret, http.MethodPost, target, worst.Body)
	stop := make(chan struct{})
	var looping sync.WaitGroup
	for range *loopers {
		looping.Add(1)
		go func() {
			defer looping.Done()
			for {
				select {
				case <-stop:
					return
				default:
					send(http.MethodPost, target, *platform, worstSig, worst.Body)
				}
			}
		}()
	}
	time.Sleep(time.Second)
	beside := medianSmall(500)
	close(stop)
	looping.Wait()
	fmt.Printf("small 422, median of 500: alone %v, beside %d clients looping on %s %v\n",
		alone.Round(time.Microsecond), *loopers, worst.Name, beside.Round(time.Microsecond))

	// Authentication timing: one connection, the two kinds interleaved in random order.
	get := "/api/platform/users/get/" + uuid.NewString()
	wrong := payments.Sign("not-the-secret", http.MethodGet, get, nil)
	var unknown, wrongSig []time.Duration
	kinds := make([]bool, 0, 2**timing)
	for range *timing {
		kinds = append(kinds, true, false)
	}
	rand.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	for range 200 { // warm the connection and the caches
		send(http.MethodGet, get, *platform, wrong, nil)
	}
	for _, isUnknown := range kinds {
		if isUnknown {
			status, took := send(http.MethodGet, get, uuid.NewString(), wrong, nil)
			check(status)
			unknown = append(unknown, took)
		} else {
			status, took := send(http.MethodGet, get, *platform, wrong, nil)
			check(status)
			wrongSig = append(wrongSig, took)
		}
	}
	mu, mw := median(unknown), median(wrongSig)
	fmt.Printf("authentication failures, medians of %d each: unknown platform %v, wrong signature %v, difference %v\n",
		*timing, mu, mw, (mu - mw).Abs())
	fmt.Printf("server at end: VmHWM %d MB, VmRSS %d MB\n", memKB(*pid, "VmHWM")>>10, memKB(*pid, "VmRSS")>>10)
}

func check(status int) {
	if status != http.StatusUnauthorized {
		log.Fatalf("authentication probe answered %d, want 401 (is the server running with -auth-failures 0?)", status)
	}
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times (100 on Linux).
const clockTicks = 100

// cpuTicks returns the user and system CPU time the process has used, in clock ticks.
func cpuTicks(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		log.Fatal(err)
	}
	// The fields after the command name (in parentheses, which may hold spaces).
	fields := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return utime + stime
}

// memKB returns a memory figure of /proc/PID/status, in KiB.
func memKB(pid int, name string) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		log.Fatal(err)
	}
	for line := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(line, name+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
