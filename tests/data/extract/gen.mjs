// Writes dialogues.jsonl: short agent conversations (travel, shopping,
// support, betting, trading, personal assistant) with every user turn
// labelled with the memories a person would want kept from it.
// `node tests/data/extract/gen.mjs` rewrites the same file (no randomness).
//
// How the labels were written (before the rules in src/core/extract/rules.rs
// were, though by the same hand, so the two are not independent):
// - A memory is what a later session should know about the user: a
//   preference (like, dislike, standing instruction), a lasting fact
//   (identity, home, work, diet, allergy, family, holdings, accounts) or an
//   event (a trip, a purchase, a bet, an incident), dated when a date is said.
// - Not memories: greetings, thanks, acknowledgements, questions, requests
//   for the task at hand ("find me a hotel", "I'd like a table for two"),
//   reactions to something on screen ("I love that one"), assistant turns.
// - Text: the user's clause said again in the third person with small
//   edits: I -> User, my -> User's / their, the verb agreed, intensifiers
//   and fillers ("really", "btw", "lol") dropped, dates kept as said and
//   moved to the end when they led the clause. Standing instructions read
//   "User wants the assistant to always/never ...". A memory that needs
//   the context resolved ("It's 200 Main St") is written resolved, even
//   though no rule can do that.
// - subject: what a later statement could contradict, for preferences and
//   facts where that is clear (units, seat, diet, home, employer, job, name,
//   email, allergy:x, favorite:x, currency, theme ...); null otherwise.
// - date: the event's date (UTC), for "next Friday" the first Friday after
//   the turn, for "last week" seven days before it, for a month the 1st.
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const out = [];
const DEFAULT_AT = "2024-06-12T15:00:00Z"; // a Wednesday
// "tuned": written with the rules, which were then corrected against them.
// "round2": written after the first rules and measured (precision 0.833,
//   recall 0.333, junk 0.167), then the rules were corrected against it.
// "fresh": written after the second rules; its figures are the honest ones,
//   and the rules were not changed for it.
let split = "tuned";
function dialog(id, at, ...turns) {
  const t0 = Date.parse(at ?? DEFAULT_AT);
  out.push({
    id,
    split,
    turns: turns.map((t, i) => ({ id: `${id}/${i}`, role: t.role, content: t.content, created_at: t0 + i * 60_000, expect: t.expect })),
  });
}
const u = (content, ...expect) => ({ role: "user", content, expect });
const a = (content) => ({ role: "assistant", content, expect: [] });
const P = (text, subject = null) => ({ kind: "preference", text, subject });
const F = (text, subject = null) => ({ kind: "fact", text, subject });
const E = (text, date = null) => ({ kind: "event", text, date });

// ---------- travel ----------
dialog("travel-seat", null,
  u("Hi! I need a flight from Boston to Denver next Tuesday."),
  a("Sure, any seat preference?"),
  u("I prefer aisle seats, and I never check bags.", P("User prefers aisle seats.", "seat"), P("User never checks bags.")),
  a("Got it. Here are three options."),
  u("Thanks, the first one works."));
dialog("travel-paris", null,
  u("I visited Paris in March 2024 and loved the food.", E("User visited Paris in March 2024 and loved the food.", "2024-03-01")),
  a("Sounds lovely! Where to next?"),
  u("Thinking about Lisbon. I'm flying to Lisbon on 2024-09-14.", E("User is flying to Lisbon on 2024-09-14.", "2024-09-14")),
  a("I love Lisbon! I can watch fares for you."),
  u("Please always show prices in euros.", P("User wants the assistant to always show prices in euros.", "currency")));
dialog("travel-kyoto", null,
  u("hey there"),
  a("Hi! How can I help?"),
  u("looking for a hotel in Kyoto for 3 nights"),
  a("Any preferences?"),
  u("i'm vegetarian and i hate noisy rooms", F("User is vegetarian.", "diet"), P("User hates noisy rooms.")),
  a("Noted."),
  u("ok cool, book the Gion one"));
dialog("travel-tokyo", "2024-04-20T08:30:00Z",
  u("I'm flying to Tokyo on 2024-05-03.", E("User is flying to Tokyo on 2024-05-03.", "2024-05-03")),
  a("Want me to find a hotel near Shinjuku?"),
  u("Yes please. My budget is $200 a night.", F("User's budget is $200 a night.", "budget")),
  a("Okay."),
  u("Also I'd rather be near a train station.", P("User would rather be near a train station.")));
dialog("travel-rome", null,
  u("I got back from Rome yesterday.", E("User got back from Rome yesterday.", "2024-06-11")),
  a("Welcome back! How was it?"),
  u("Great. Next Friday I'm driving to Florence.", E("User is driving to Florence next Friday.", "2024-06-14")),
  a("Nice, want a route?"),
  u("cool thanks"));
dialog("travel-oslo", null,
  u("What's the weather like in Oslo this weekend?"),
  a("Around 18°C and sunny."),
  u("I prefer Fahrenheit, I'm American.", P("User prefers Fahrenheit.", "units"), F("User is American.", "nationality")),
  a("That's about 64°F."),
  u("perfect"));
dialog("travel-delta", null,
  u("I always fly Delta when I can.", P("User always flies Delta when they can.")),
  a("Noted. Do you have a SkyMiles number?"),
  u("My SkyMiles number is 2291 8812.", F("User's SkyMiles number is 2291 8812.", "skymiles number")),
  a("Saved."),
  u("thx"));
dialog("travel-family", null,
  u("We're a family of four, two adults and two kids.", F("User's family has four people, two adults and two kids.", "family")),
  a("Great, I'll look for family rooms."),
  u("My daughter is allergic to peanuts.", F("User's daughter is allergic to peanuts.")),
  a("I'll flag it with the airline."),
  u("Can we get connecting rooms?"));
dialog("travel-berlin-cancel", null,
  u("I need to cancel my trip to Berlin next week.", E("User is cancelling their trip to Berlin next week.", "2024-06-19")),
  a("Sorry to hear that. What's the booking reference?"),
  u("Booking ref is XK29QL."),
  a("Cancelled, you'll get a full refund."),
  u("ok great, thank you so much!"));
dialog("travel-seat-change", null,
  u("I like window seats.", P("User likes window seats.", "seat")),
  a("Window it is."),
  u("Actually, I prefer aisle seats now.", P("User prefers aisle seats.", "seat")),
  a("Updated."),
  u("Sounds good."));
dialog("travel-visa", null,
  u("I'm a British citizen living in Madrid.", F("User is a British citizen living in Madrid.")),
  a("Thanks. Where are you heading?"),
  u("Do I need a visa for Canada?"),
  a("British citizens need an eTA, not a visa."),
  u("I'm going there on August 2nd.", E("User is going to Canada on August 2nd.", "2024-08-02")));
dialog("travel-thai", null,
  u("I love spicy food but I can't stand cilantro.", P("User loves spicy food.", "spicy food"), P("User can't stand cilantro.", "cilantro")),
  a("I'll skip places that garnish everything with it."),
  u("Any good Thai places near my hotel?"));
dialog("travel-singapore", null,
  u("I'm attending a conference in Singapore from 2024-10-07 to 2024-10-10.", E("User is attending a conference in Singapore from 2024-10-07 to 2024-10-10.", "2024-10-07")),
  a("Shall I look at hotels near Marina Bay?"),
  u("I'd prefer a hotel within walking distance of the venue."),
  a("Here are two."),
  u("the second one looks great"));
dialog("travel-iceland", null,
  u("My husband and I are going to Iceland on 15 September 2024.", E("User and their husband are going to Iceland on 15 September 2024.", "2024-09-15")),
  a("How exciting!"),
  u("It's our anniversary trip!"));
dialog("travel-meals", null,
  u("I'm a vegetarian, please note that for all my flights.", F("User is a vegetarian.", "diet")),
  a("Done: vegetarian meals on all bookings."),
  u("I also prefer morning flights.", P("User prefers morning flights.")));
dialog("travel-curly", null,
  u("I’m based in Toronto and I’d rather get texts than calls.", F("User is based in Toronto.", "home"), P("User would rather get texts than calls.", "contact method")),
  a("Understood."),
  u("👍"));

// ---------- shopping ----------
dialog("shop-shoes", null,
  u("Hi, I'm looking for running shoes."),
  a("What size?"),
  u("I wear a size 10 and I have wide feet.", F("User wears a size 10.", "shoe size"), F("User has wide feet.")),
  a("Brooks and New Balance do wide fits."),
  u("I don't like Nike, their sizing runs small for me.", P("User doesn't like Nike.", "nike")),
  a("Okay, no Nike."),
  u("ok I'll take the Brooks"));
dialog("shop-hub", null,
  u("My laptop is a 2019 MacBook Pro.", F("User's laptop is a 2019 MacBook Pro.", "laptop")),
  a("Then you need USB-C or Thunderbolt 3."),
  u("I need a USB-C hub that works with it."),
  a("How much would you like to spend?"),
  u("Prefer something under $50."),
  u("Great, thanks!"));
dialog("shop-delivery", null,
  u("Please always ship to my office address.", P("User wants the assistant to always ship to their office address.", "shipping address")),
  a("What is the office address?"),
  u("It's 200 Main St, Springfield.", F("User's office address is 200 Main St, Springfield.", "office address")),
  a("Saved."),
  u("ok"));
dialog("shop-blender", null,
  u("I bought a blender on 2024-05-20 and it already broke.", E("User bought a blender on 2024-05-20 and it already broke.", "2024-05-20")),
  a("I'm sorry! Do you have the order number?"),
  u("Order number is 88123."),
  a("Would you like a replacement or a refund?"),
  u("I want a refund, not a replacement."));
dialog("shop-sizes", null,
  u("I'm a medium in shirts and a 32 in jeans.", F("User is a medium in shirts and a 32 in jeans.", "clothing size")),
  a("Got it."),
  u("My favorite color is navy.", P("User's favorite color is navy.", "favorite:color")),
  a("Here are three navy polos."),
  u("Cool, add the navy one to the cart"));
dialog("shop-gift", null,
  u("My wife's birthday is on July 9.", F("User's wife's birthday is on July 9.", "wife's birthday")),
  a("Would you like gift ideas?"),
  u("She loves gardening and she hates perfume.", P("User's wife loves gardening."), P("User's wife hates perfume.")),
  a("How about a pruning set?"),
  u("Thanks, that's helpful"));
dialog("shop-grocery", null,
  u("I'm lactose intolerant, so no dairy please.", F("User is lactose intolerant.")),
  a("Okay, swapping milk for oat milk?"),
  u("I usually buy oat milk.", P("User usually buys oat milk.")),
  u("And add bananas"));
dialog("shop-prime", null,
  u("I have an Amazon Prime membership.", F("User has an Amazon Prime membership.")),
  a("Then shipping is free."),
  u("Can you check when my package arrives?"),
  a("It says it's delayed."),
  u("It was supposed to arrive yesterday."));
dialog("shop-chatter", null,
  u("hello"),
  a("Hi! What are you shopping for today?"),
  u("ok"),
  a("Here are today's deals."),
  u("sounds good"),
  a("Shall I add the first one?"),
  u("sure"),
  a("Added."),
  u("Thank you!"));
dialog("shop-sizing-body", null,
  u("i'm 6'2\" and about 190 lbs", F("User is 6'2\" and about 190 lbs.", "height")),
  a("A large should fit."),
  u("what size jacket should i get?"));
dialog("shop-brand", null,
  u("I'm a huge fan of Patagonia.", P("User is a huge fan of Patagonia.", "patagonia")),
  a("Their fleece is on sale."),
  u("I dislike synthetic fabrics.", P("User dislikes synthetic fabrics.", "synthetic fabrics")),
  u("Show me wool sweaters then"));
dialog("shop-questions", null,
  u("Do you have this in blue?"),
  a("Yes, in sizes S to XL."),
  u("What's the return policy?"),
  a("30 days."),
  u("How long does shipping take?"),
  a("Three to five days."),
  u("Can I pay with PayPal?"));

// ---------- support ----------
dialog("support-login", null,
  u("Hi, I can't log in to my account."),
  a("Sorry about that. What's the email on the account?"),
  u("My email is ana.silva@example.com", F("User's email is ana.silva@example.com.", "email")),
  a("Have you tried resetting your password?"),
  u("Yes I tried resetting my password already."),
  u("ok it works now, thanks!"));
dialog("support-billing", null,
  u("I was charged twice for my subscription on 2024-06-01.", E("User was charged twice for their subscription on 2024-06-01.", "2024-06-01")),
  a("I can help. What's the name on the account?"),
  u("My name is Jordan Lee.", F("User's name is Jordan Lee.", "name")),
  a("Refund issued."),
  u("thanks"));
dialog("support-plan", null,
  u("I'm on the Pro plan.", F("User is on the Pro plan.", "plan")),
  a("Thanks!"),
  u("Is there a discount for annual billing?"),
  a("Yes, two months free."),
  u("I'd rather pay monthly then.", P("User would rather pay monthly.")));
dialog("support-device", null,
  u("I use an Android phone, a Pixel 8.", F("User uses an Android phone, a Pixel 8.", "phone")),
  a("Which app version?"),
  u("The app crashes when I open settings."),
  a("Please try reinstalling."),
  u("Got it, I'll try reinstalling."));
dialog("support-spanish", null,
  u("Hola, can you reply in Spanish please?", P("User wants replies in Spanish.", "language")),
  a("¡Claro! ¿En qué puedo ayudarte?"),
  u("Gracias. Mi pedido no ha llegado."));
dialog("support-moved", null,
  u("I moved to Chicago last month.", E("User moved to Chicago last month.", "2024-05-01")),
  a("Would you like to update your address?"),
  u("My new address is 455 Lake Shore Dr, Chicago.", F("User's new address is 455 Lake Shore Dr, Chicago.", "address")),
  a("Updated."),
  u("Thanks for updating it"));
dialog("support-colorblind", null,
  u("I'm colorblind, so the red and green status icons don't help me.", F("User is colorblind.")),
  a("Thanks for telling me. I'll describe statuses in words."),
  u("Please never rely on color alone when you explain things.", P("User wants the assistant to never rely on color alone when explaining things.")));
dialog("support-questions", null,
  u("How do I export my data?"),
  a("Settings → Export."),
  u("Where is the settings page?"),
  a("Top right, the gear icon."),
  u("ok thanks"),
  u("Is there a dark mode?"));
dialog("support-dark-mode", null,
  u("I prefer dark mode.", P("User prefers dark mode.", "theme")),
  a("I prefer it too!"),
  u("Can you turn it on?"));
dialog("support-empty-box", null,
  u("My package was delivered today but the box was empty.", E("User's package was delivered today but the box was empty.", "2024-06-12")),
  a("I'm so sorry. I'll open a claim."),
  u("ok"));
dialog("support-returned", null,
  u("I returned the headphones on May 28, 2024 and still haven't got my refund.", E("User returned the headphones on May 28, 2024 and still hasn't got their refund.", "2024-05-28")),
  a("Let me check."),
  u("Thanks, I'll wait."));
dialog("support-timezone", null,
  u("I'm in Pacific time, so schedule calls after 10am.", F("User is in Pacific time.", "timezone"), P("User wants calls scheduled after 10am.")),
  a("Noted."),
  u("Perfect."));
dialog("support-contact", null,
  u("You can reach me at +1 415 555 0134.", F("User's phone number is +1 415 555 0134.", "phone")),
  u("My email's jo@example.org", F("User's email is jo@example.org.", "email")),
  a("Thanks, both saved."));

// ---------- betting ----------
dialog("bet-limits", null,
  u("Hey"),
  a("Hey! Ready for tonight's games?"),
  u("I never bet more than $50 on a single game.", P("User never bets more than $50 on a single game.")),
  a("I'll keep every stake under $50."),
  u("I'm a big Lakers fan.", P("User is a big Lakers fan.", "lakers")),
  a("Lakers play the Suns tonight."),
  u("Put $20 on the Lakers tonight."));
dialog("bet-odds", null,
  u("Please always show odds in decimal format.", P("User wants the assistant to always show odds in decimal format.", "odds")),
  a("Sure."),
  u("What are the odds for Arsenal vs Chelsea?"),
  a("Arsenal 2.10, draw 3.40, Chelsea 3.50."),
  u("I support Arsenal, so maybe I'm biased lol", P("User supports Arsenal.")));
dialog("bet-history", null,
  u("I won $300 on the Super Bowl last year.", E("User won $300 on the Super Bowl last year.", "2023-01-01")),
  a("Nice!"),
  u("I lost $120 yesterday on a parlay.", E("User lost $120 yesterday on a parlay.", "2024-06-11")),
  u("ugh"));
dialog("bet-responsible", null,
  u("I want to set a weekly limit of $100.", P("User wants a weekly betting limit of $100.", "weekly limit")),
  a("Done: $100 a week."),
  u("Don't let me bet after midnight.", P("User wants the assistant to not allow bets after midnight.")),
  u("thanks mate"));
dialog("bet-tennis", null,
  u("I mostly bet on tennis and I hate horse racing.", P("User mostly bets on tennis."), P("User hates horse racing.", "horse racing")),
  a("Wimbledon starts soon."),
  u("Who's playing at Wimbledon today?"));
dialog("bet-wallet", null,
  u("My wallet address is 0x3f5CE5FBFe3E9af3971dD833D26bA9b5C936f0bE.", F("User's wallet address is 0x3f5CE5FBFe3E9af3971dD833D26bA9b5C936f0bE.", "wallet address")),
  a("Linked."),
  u("I deposited 500 USDC on June 1.", E("User deposited 500 USDC on June 1.", "2024-06-01")),
  u("ok"));
dialog("bet-intro", null,
  u("I'm Tom, from Manchester.", F("User's name is Tom.", "name"), F("User is from Manchester.", "origin")),
  a("Hi Tom! City or United?"),
  u("Man United obviously"));

// ---------- trading ----------
dialog("trade-risk", null,
  u("My risk tolerance is low.", F("User's risk tolerance is low.", "risk tolerance")),
  a("Understood."),
  u("I'm a conservative investor and I'm retiring in 2030.", F("User is a conservative investor."), E("User is retiring in 2030.", "2030-01-01")),
  a("Then bonds deserve a bigger share."),
  u("What's your take on NVDA?"));
dialog("trade-holdings", null,
  u("I hold 100 shares of AAPL and some TSLA.", F("User holds 100 shares of AAPL and some TSLA.")),
  a("Noted."),
  u("I bought 50 more AAPL shares on 2024-06-03.", E("User bought 50 more AAPL shares on 2024-06-03.", "2024-06-03")),
  a("Your AAPL position is now 150 shares."),
  u("Got it"));
dialog("trade-caps", null,
  u("I only trade large caps, no penny stocks.", P("User only trades large caps, no penny stocks.")),
  a("Okay."),
  u("I prefer limit orders over market orders.", P("User prefers limit orders over market orders.", "order type")),
  a("All orders will be limit orders."),
  u("Sounds good, thanks."));
dialog("trade-zurich", null,
  u("I'm based in Zurich, so show me everything in CHF.", F("User is based in Zurich.", "home"), P("User wants everything shown in CHF.", "currency")),
  a("Switched to CHF."),
  u("What's my portfolio worth?"));
dialog("trade-bitcoin", null,
  u("Yesterday I sold all my bitcoin.", E("User sold all their bitcoin yesterday.", "2024-06-11")),
  a("Okay, your crypto balance is zero."),
  u("I'm not touching crypto again.", P("User is not touching crypto again.")));
dialog("trade-goldman", null,
  u("I work at Goldman Sachs as an analyst.", F("User works at Goldman Sachs as an analyst.", "employer")),
  a("Thanks."),
  u("So I can't trade individual bank stocks.", F("User can't trade individual bank stocks.")));
dialog("trade-advisor", null,
  u("I'm meeting my financial advisor tomorrow.", E("User is meeting their financial advisor tomorrow.", "2024-06-13")),
  a("Want a summary of your portfolio for it?"),
  u("What should I ask her?"));
dialog("trade-ira", null,
  u("Last week I opened a Roth IRA.", E("User opened a Roth IRA last week.", "2024-06-05")),
  a("Great choice for long-term savings."),
  u("ok cool"));
dialog("trade-alerts", null,
  u("Please never place trades without asking me first.", P("User wants the assistant to never place trades without asking them first.")),
  a("I'll always ask first."),
  u("And notify me by email, not SMS.", P("User wants notifications by email, not SMS.", "notification")));
dialog("trade-options", null,
  u("I've been trading options for about five years.", F("User has been trading options for about five years.", "experience")),
  a("Great."),
  u("I'm not a beginner, skip the basics.", F("User is not a beginner.", "experience")));

// ---------- personal assistant ----------
dialog("personal-intro", null,
  u("Hi, my name is Ana and I live in Lisbon.", F("User's name is Ana.", "name"), F("User lives in Lisbon.", "home")),
  a("Nice to meet you, Ana!"),
  u("I'm a software engineer.", F("User is a software engineer.", "job")),
  a("Nice to meet you too."),
  u("Nice to meet you too!"));
dialog("personal-allergy", null,
  u("I'm allergic to shellfish.", F("User is allergic to shellfish.", "allergy:shellfish")),
  a("Noted."),
  u("Can you suggest a dinner recipe?"),
  a("How about a mushroom risotto?"),
  u("That sounds delicious, thanks!"));
dialog("personal-units", null,
  u("I prefer metric units.", P("User prefers metric units.", "units")),
  a("Okay."),
  u("How far is it from Boston to New York?"),
  a("About 300 km."),
  u("Actually I prefer imperial units.", P("User prefers imperial units.", "units")));
dialog("personal-dog", null,
  u("I have a golden retriever named Max.", F("User has a golden retriever named Max.")),
  a("How old is he?"),
  u("He's 3 years old.", F("User's dog Max is 3 years old.")),
  u("lol yes he is"));
dialog("personal-dentist", null,
  u("I have a dentist appointment tomorrow at 9.", E("User has a dentist appointment tomorrow at 9.", "2024-06-13")),
  a("Want a reminder?"),
  u("Remind me to leave by 8:30."),
  a("Reminder set."),
  u("ok thx"));
dialog("personal-drinks", null,
  u("My favourite coffee is a flat white.", P("User's favourite coffee is a flat white.", "favorite:coffee")),
  a("Classic."),
  u("I don't drink alcohol.", P("User doesn't drink alcohol.", "alcohol")),
  u("haha fair"));
dialog("personal-birthday", null,
  u("My birthday is 1990-04-12.", F("User's birthday is 1990-04-12.", "birthday")),
  a("Noted!"),
  u("I'm 34.", F("User is 34.", "age")));
dialog("personal-fridays", null,
  u("I usually work from home on Fridays.", P("User usually works from home on Fridays.")),
  a("Okay."),
  u("i'm in meetings all morning today"),
  u("can you move my 1:1 to 3pm?"));
dialog("personal-kids", null,
  u("I have two kids, 5 and 8.", F("User has two kids, 5 and 8.", "children")),
  a("Lovely ages."),
  u("My son Leo loves dinosaurs.", P("User's son Leo loves dinosaurs.")),
  u("Thanks!"));
dialog("personal-berlin", null,
  u("I'm moving to Berlin next month for a new job.", E("User is moving to Berlin next month for a new job.", "2024-07-01")),
  a("Congratulations!"),
  u("I'll be working at Zalando.", F("User will be working at Zalando.", "employer")));
dialog("personal-vegan", null,
  u("I'm vegan, so please never suggest recipes with eggs or dairy.", F("User is vegan.", "diet"), P("User wants the assistant to never suggest recipes with eggs or dairy.")),
  a("Understood."),
  u("great"));
dialog("personal-music", null,
  u("I enjoy jazz and classical music.", P("User enjoys jazz and classical music.")),
  a("Here's a playlist."),
  u("Play something relaxing"));
dialog("personal-omakase", null,
  u("Can you find me a sushi place? I love omakase.", P("User loves omakase.", "omakase")),
  a("Sushi Nakazawa has an omakase counter."),
  u("I'm allergic to sesame though.", F("User is allergic to sesame.", "allergy:sesame")),
  u("Ok book it for 8"));
dialog("personal-latte", null,
  u("The usual please, I always get an oat latte.", P("User always gets an oat latte.")),
  u("thanks!"));
dialog("personal-lowercase", null,
  u("im allergic to penicillin", F("User is allergic to penicillin.", "allergy:penicillin")),
  a("Noted."),
  u("i dont like mushrooms", P("User doesn't like mushrooms.", "mushrooms")),
  a("Noted too."),
  u("my fav team is the Celtics", P("User's favorite team is the Celtics.", "favorite:team")));

// ---------- chatter, questions and requests only ----------
dialog("chatter-hello", null,
  u("hi"),
  a("Hi! How are you?"),
  u("how are you?"),
  a("Doing well, thanks."),
  u("good, you?"),
  u("cool"),
  u("bye!"));
dialog("chatter-acks", null,
  u("Yes"),
  a("Shall I send it?"),
  u("No thanks"),
  a("Here's the summary."),
  u("Perfect, that's exactly what I needed"),
  u("Got it, thanks!"),
  u("Sure, go ahead"));
dialog("questions-with-i", null,
  u("Can I change my seat?"),
  a("Yes, for $25."),
  u("Should I book now or wait?"),
  a("Prices usually rise."),
  u("What if I miss my connection?"),
  a("You'll be rebooked."),
  u("Do I need to print my boarding pass?"));
dialog("deictic-reactions", null,
  a("Here are three options."),
  u("I love it!"),
  u("I like that one better"),
  a("And this one?"),
  u("I hate this"),
  u("I prefer the second option"));
dialog("requests-only", null,
  u("I'd like to book a table for two at 7pm."),
  a("Done."),
  u("I want the cheapest option."),
  u("I need a taxi to the airport."),
  u("I'd love a recommendation for dinner."));
dialog("chatter-emoji", null,
  u("🙏🙏"),
  a("You're welcome!"),
  u("lol ok"),
  u("haha yes"),
  u("ttyl"));

// ---------- round 2: written after the first rules, then tuned on ----------
split = "round2";
dialog("held-japan", null,
  u("Morning! Planning a trip to Japan in October.", E("User is planning a trip to Japan in October.", "2024-10-01")),
  a("Fun! Which cities?"),
  u("Tokyo and Osaka. I'm not a big fan of crowded places though.", P("User is not a big fan of crowded places.", "crowded places")),
  a("Then Kanazawa might be nice too."),
  u("Also we've got a toddler, so something kid-friendly.", F("User has a toddler.", "children")));
dialog("held-airline", null,
  u("I've got Global Entry, if that matters.", F("User has Global Entry.")),
  a("It does, it speeds up re-entry."),
  u("And I'd never fly Spirit again, last time was a nightmare.", P("User would never fly Spirit again.", "spirit")),
  a("Noted."),
  u("ok let's go with United"));
dialog("held-mom-gift", null,
  u("Looking for a gift for my mom, she's turning 60 next month.", E("User's mom is turning 60 next month.", "2024-07-01")),
  a("How lovely. What does she like?"),
  u("She's really into gardening and birdwatching.", P("User's mom is into gardening and birdwatching.")),
  u("Budget's around $80."));
dialog("held-tea", null,
  u("I'm more of a tea person, honestly.", P("User is more of a tea person.", "tea")),
  a("We have great teas."),
  u("Do you have any oolong?"),
  a("Yes, two kinds."),
  u("I'll take two tins."));
dialog("held-customer", null,
  u("Hey, I've been a customer since 2016.", F("User has been a customer since 2016.")),
  a("Thanks for your loyalty! How can I help?"),
  u("My account is under my work email, dana@example.net.", F("User's account is under their work email, dana@example.net.", "account email")),
  a("Found it."),
  u("The last invoice looks wrong."));
dialog("held-gluten", null,
  u("I can't eat gluten, is the bread gluten-free?", F("User can't eat gluten.", "gluten")),
  a("Yes, it's certified."),
  u("great, thanks a lot"));
dialog("held-rick", null,
  u("Call me Rick.", F("User's name is Rick.", "name")),
  a("Hi Rick!"),
  u("I usually stake $10 a game, never more than $25.", P("User usually stakes $10 a game, never more than $25.")),
  a("Got it."),
  u("Give me the Yankees moneyline."));
dialog("held-epl", null,
  u("I only bet on the Premier League.", P("User only bets on the Premier League.")),
  a("Okay."),
  u("I'm a Liverpool supporter.", P("User is a Liverpool supporter.", "liverpool")),
  a("Liverpool play Sunday."),
  u("What are the odds tonight?"));
dialog("held-house", null,
  u("I'm saving for a house, so I want low risk.", F("User is saving for a house."), P("User wants low risk.", "risk")),
  a("Makes sense."),
  u("I have about $40k in an index fund.", F("User has about $40k in an index fund.")),
  a("That's a solid base."),
  u("Makes sense"));
dialog("held-fees", null,
  u("I hate paying high fees.", P("User hates paying high fees.")),
  a("Index funds keep fees low."),
  u("I bought ETH in 2021 and I'm still down.", E("User bought ETH in 2021.", "2021-01-01")),
  u("lol yeah"));
dialog("held-marathon", null,
  u("I'm training for a marathon in November.", E("User is training for a marathon in November.", "2024-11-01")),
  a("Exciting!"),
  u("I run about 30 miles a week.", F("User runs about 30 miles a week.")),
  a("Good base."),
  u("Any tips for recovery?"));
dialog("held-night-owl", null,
  u("I'm a night owl, so don't schedule anything before 10.", F("User is a night owl."), P("User wants nothing scheduled before 10.")),
  a("Understood."),
  u("My partner is Sam, by the way.", F("User's partner is Sam.")));
dialog("held-cat", null,
  u("We just adopted a cat named Miso!", E("User adopted a cat named Miso.")),
  a("Congrats! How old?"),
  u("She's two.", F("User's cat Miso is two.")),
  u("Any food recommendations?"));
dialog("held-olives", null,
  u("Honestly I can't stand olives.", P("User can't stand olives.", "olives")),
  a("Noted."),
  u("But I love anything with mushrooms.", P("User loves anything with mushrooms.", "mushrooms")),
  a("A mushroom risotto, then?"),
  u("Surprise me"));
dialog("held-passport", null,
  u("My passport expires in March 2025.", F("User's passport expires in March 2025.", "passport expiry")),
  a("You'll want to renew it soon."),
  u("Oh no. Can I still travel to Mexico in February?"));
dialog("held-hearing", null,
  u("I'm hard of hearing, please use chat instead of calls.", F("User is hard of hearing."), P("User wants chat instead of calls.", "contact method")),
  a("Of course."),
  u("Thanks for understanding"));
dialog("held-dress", null,
  u("I'm a size 8 in dresses.", F("User is a size 8 in dresses.", "dress size")),
  a("Here are some options."),
  u("I don't really like bright colors.", P("User doesn't like bright colors.", "bright colors")),
  a("Here are softer tones."),
  u("That green one is nice though"));
dialog("held-manager", null,
  u("I manage a team of 12 engineers.", F("User manages a team of 12 engineers.")),
  a("How can I help?"),
  u("I prefer short bullet-point summaries.", P("User prefers short bullet-point summaries.")),
  a("Will do."),
  u("Can you summarize this doc?"));
dialog("held-berlin-cet", null,
  u("I'm in Berlin until Friday, then back in London.", E("User is in Berlin until Friday, then back in London.")),
  a("Noted."),
  u("Please always put meeting times in CET.", P("User wants the assistant to always put meeting times in CET.", "timezone")),
  u("ty"));
dialog("held-investing", null,
  u("I'm 28 and I just started investing last month.", F("User is 28.", "age"), E("User started investing last month.", "2024-05-01")),
  a("Welcome!"),
  u("I don't want anything to do with crypto.", P("User doesn't want anything to do with crypto.")),
  u("ok"));
dialog("held-chatter", null,
  u("heyyy"),
  a("Hey!"),
  u("all good?"),
  a("All good."),
  u("haha nice"),
  u("k"),
  u("see you tomorrow!"));
dialog("held-questions", null,
  u("Would I be able to change my flight?"),
  a("Yes, for a fee."),
  u("Is there wifi on board?"),
  a("Yes."),
  u("How much is a checked bag?"),
  a("$35."),
  u("What time do I need to be at the airport?"));
dialog("held-requests", null,
  u("Book me the 7am flight."),
  a("Booked."),
  u("Can you find a cheaper hotel?"),
  a("Here's one."),
  u("I'd like an ocean view if possible."),
  u("Send me the receipt please."));
dialog("held-card", null,
  u("My card got declined yesterday at the pharmacy.", E("User's card got declined yesterday at the pharmacy.", "2024-06-11")),
  a("Sorry! Which card?"),
  u("It's a Visa ending in 4242.", F("User's card is a Visa ending in 4242.")));
dialog("held-languages", null,
  u("I speak French and a bit of German.", F("User speaks French and a bit of German.")),
  a("Très bien !"),
  u("Reply in English though.", P("User wants replies in English.", "language")));

// ---------- fresh: written after the second rules, not tuned on ----------
split = "fresh";
dialog("fresh-wedding", null,
  u("hiya, need to get to Denver for a wedding on July 20th", E("User is going to Denver for a wedding on July 20th.", "2024-07-20")),
  a("Congrats! Flying from?"),
  u("Seattle. I'm a United MileagePlus member fwiw", F("User is a United MileagePlus member.", "airline membership")),
  a("Great, I'll look at United first."),
  u("oh and i'm terrified of small planes lol", P("User is terrified of small planes.")));
dialog("fresh-gym", null,
  u("I always book hotels with a gym.", P("User always books hotels with a gym.")),
  a("Noted."),
  u("and I'm a light sleeper so high floors please", F("User is a light sleeper."), P("User wants high floors.", "room")),
  u("thx!"));
dialog("fresh-beans", null,
  u("can you reorder my usual coffee beans?"),
  a("The Ethiopian Yirgacheffe?"),
  u("yes, that's my go-to", P("User's go-to coffee beans are the Ethiopian Yirgacheffe.")),
  a("Reordered."),
  u("also I switched to oat milk last month", E("User switched to oat milk last month.", "2024-05-01")));
dialog("fresh-jacket", null,
  u("The jacket I ordered on June 2 is too small.", E("User ordered a jacket on June 2 that is too small.", "2024-06-02")),
  a("Want to exchange it?"),
  u("Yeah, I usually wear a large.", P("User usually wears a large.", "size")),
  a("Exchange started."));
dialog("fresh-locked", null,
  u("I'm locked out of my account again 😩"),
  a("Let's fix that. Username?"),
  u("it's mike_t88", F("User's username is mike_t88.", "username")),
  a("Reset link sent."),
  u("got it, thanks"));
dialog("fresh-router", null,
  u("I've had this router since 2019.", F("User has had their router since 2019.")),
  a("It may need a firmware update."),
  u("I'm not very technical, so keep it simple please.", F("User is not very technical."), P("User wants simple explanations.")));
dialog("fresh-underdog", null,
  u("what's the spread on the Chiefs game?"),
  a("Chiefs -3.5."),
  u("I always take the underdog in divisional games.", P("User always takes the underdog in divisional games.")),
  a("Okay."),
  u("put 15 on the Raiders"));
dialog("fresh-bankroll", null,
  u("My bankroll is $500 for the season.", F("User's bankroll is $500 for the season.", "bankroll")),
  a("Got it."),
  u("I don't bet on college sports.", P("User doesn't bet on college sports.")),
  u("ok cool"));
dialog("fresh-futures", null,
  u("I'm a day trader, mostly futures.", F("User is a day trader, mostly futures.", "job")),
  a("Which contracts?"),
  u("ES and NQ. I hate holding positions overnight.", F("User trades ES and NQ."), P("User hates holding positions overnight.")),
  a("Noted."),
  u("Show me today's levels"));
dialog("fresh-rebalance", null,
  u("I rebalanced my portfolio on 2024-06-01.", E("User rebalanced their portfolio on 2024-06-01.", "2024-06-01")),
  a("How did it go?"),
  u("Fine. My target is 60/40 stocks to bonds.", F("User's target is 60/40 stocks to bonds.", "target allocation")));
dialog("fresh-engaged", null,
  u("Just got engaged!!", E("User just got engaged.")),
  a("Congratulations!"),
  u("The wedding is next June.", E("User's wedding is next June.", "2025-06-01")),
  u("Thank you 😊"));
dialog("fresh-spanish", null,
  u("I'm learning Spanish on Duolingo.", F("User is learning Spanish on Duolingo.")),
  a("¡Qué bien!"),
  u("I'm at about an A2 level.", F("User is at about an A2 level.", "spanish level")));
dialog("fresh-dad", null,
  u("My dad has diabetes, so I'm looking for low-sugar recipes.", F("User's dad has diabetes.")),
  a("Here are some ideas."),
  u("he loves Italian food", P("User's dad loves Italian food.")));
dialog("fresh-gym-routine", null,
  u("I go to the gym every morning at 6.", P("User goes to the gym every morning at 6.")),
  a("Impressive!"),
  u("I'm trying to cut carbs.", F("User is trying to cut carbs.")));
dialog("fresh-table", null,
  u("Table for 2 tonight please"),
  a("Any dietary needs?"),
  u("My girlfriend is pescatarian and I'm allergic to tree nuts.", F("User's girlfriend is pescatarian."), F("User is allergic to tree nuts.", "allergy:tree nuts")),
  a("Noted."));
dialog("fresh-garlic", null,
  u("I'm not a huge fan of spicy stuff.", P("User is not a huge fan of spicy stuff.", "spicy stuff")),
  a("Mild it is."),
  u("But I do love garlic.", P("User loves garlic.", "garlic")));
dialog("fresh-cto", null,
  u("I'm the CTO at a small fintech startup.", F("User is the CTO at a small fintech startup.", "job")),
  a("Nice."),
  u("We use Rust and TypeScript.", F("User's company uses Rust and TypeScript.")));
dialog("fresh-hours", null,
  u("I usually start work at 8 and finish at 4.", P("User usually starts work at 8 and finishes at 4.")),
  a("Okay."),
  u("Please never book meetings on Friday afternoons.", P("User wants the assistant to never book meetings on Friday afternoons.")));
dialog("fresh-chatter", null,
  u("yo"),
  a("Hey!"),
  u("whats up"),
  a("Not much, you?"),
  u("nm just bored"),
  u("haha"),
  u("later"));
dialog("fresh-questions", null,
  u("Do you remember what I said about my diet?"),
  a("You said you're vegetarian."),
  u("What's my balance?"),
  a("$120."),
  u("Did my refund go through?"),
  a("Yes."),
  u("Where's my order?"));
dialog("fresh-requests", null,
  u("I'd like to upgrade to business class."),
  a("Done."),
  u("I want to return these shoes."),
  u("I need a receipt for my expense report."),
  u("Could you remind me tomorrow at 9?"));
dialog("fresh-austin", null,
  u("Thanks! Btw I moved to Austin in January.", E("User moved to Austin in January.", "2024-01-01")),
  a("Welcome to Austin!"),
  u("I work remotely for a company in NYC.", F("User works remotely for a company in NYC.", "employer")));
dialog("fresh-pets", null,
  u("I have two cats and a dog.", F("User has two cats and a dog.", "pets")),
  a("A full house!"),
  u("My cat Luna is 12.", F("User's cat Luna is 12.")));
dialog("fresh-tesla", null,
  u("I lost a lot on Tesla calls in 2022.", E("User lost a lot on Tesla calls in 2022.", "2022-01-01")),
  a("Sorry to hear that."),
  u("I'm done with options.", P("User is done with options.")));
dialog("fresh-lisbon", null,
  u("Our flight to Lisbon got cancelled yesterday.", E("User's flight to Lisbon got cancelled yesterday.", "2024-06-11")),
  a("I'm sorry. Want me to rebook?"),
  u("Yes, and I prefer a morning departure.", P("User prefers a morning departure.")));

const lines = out.map((d) => JSON.stringify(d)).join("\n") + "\n";
const here = dirname(fileURLToPath(import.meta.url));
writeFileSync(join(here, "dialogues.jsonl"), lines);
const turns = out.reduce((n, d) => n + d.turns.length, 0);
const labels = out.reduce((n, d) => n + d.turns.reduce((m, t) => m + t.expect.length, 0), 0);
const splits = {};
for (const d of out) splits[d.split] = (splits[d.split] ?? 0) + 1;
console.log(`${out.length} dialogues ${JSON.stringify(splits)}, ${turns} turns, ${labels} labelled memories`);
