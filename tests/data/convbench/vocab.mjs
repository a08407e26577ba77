// Lexicon and templates for gen.mjs. Written for this project (MIT OR
// Apache-2.0); no outside dialog data. `{x}` slots are filled by gen.mjs.
// A template list is a set of paraphrases: the generator picks one with the
// seeded PRNG. Question templates deliberately avoid the statement's key
// words (moved/relocated, puppy/dog, bought/picked up ...).

export const NAMES = [
  "Ana", "Bruno", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hiro",
  "Ines", "Jonas", "Kavya", "Liam", "Maya", "Nikolai", "Olivia", "Pedro",
  "Quinn", "Rosa", "Samir", "Tessa", "Umar", "Vera", "Wes", "Yuki",
];
export const CITIES = [
  "Lisbon", "Porto", "Madrid", "Valencia", "Lyon", "Bordeaux", "Munich", "Hamburg",
  "Utrecht", "Ghent", "Bristol", "Leeds", "Dublin", "Cork", "Turin", "Bologna",
  "Krakow", "Gdansk", "Vienna", "Graz", "Copenhagen", "Aarhus", "Seattle", "Denver",
];
export const COMPANIES = [
  "Northwind Labs", "Bluefin Analytics", "Tessellate", "Harbor Health", "Quarry Games",
  "Lumen Energy", "Copperleaf Bank", "Stratus Logistics", "Greenline Foods", "Pinecrest Media",
  "Orbit Insurance", "Kestrel Robotics", "Meadow Schools", "Atlas Maps", "Fernwood Books",
];
// [role as said, paraphrase for questions]
export const ROLES = [
  ["data analyst", "analytics"], ["nurse", "nursing"], ["backend developer", "server-side programming"],
  ["high-school teacher", "teaching"], ["product designer", "design"], ["accountant", "bookkeeping and finance"],
  ["marketing manager", "marketing"], ["civil engineer", "engineering"], ["project manager", "project management"],
  ["pharmacist", "pharmacy"], ["copywriter", "writing copy"], ["UX researcher", "user research"],
  ["lab technician", "lab work"], ["sales lead", "sales"], ["architect", "architecture"],
];
// [said noun, question noun, kind]
export const PETS = [
  ["puppy", "dog", "dog"], ["pup", "dog", "dog"], ["kitten", "cat", "cat"], ["rescue cat", "feline", "cat"],
  ["rescue dog", "canine", "dog"], ["bunny", "rabbit", "rabbit"],
];
export const BREEDS = {
  dog: ["beagle", "border collie", "corgi", "greyhound", "labrador", "dachshund"],
  cat: ["tabby", "Maine Coon", "Siamese", "ragdoll", "black shorthair"],
  rabbit: ["lop-eared", "Dutch", "lionhead"],
};
export const PET_NAMES = ["Biscuit", "Miso", "Pepper", "Luna", "Ziggy", "Olive", "Mochi", "Rufus", "Nala", "Tofu", "Juniper", "Pickles", "Waffles", "Clementine"];
// [destination, activity said, highlight said, highlight asked]
export const TRIPS = [
  ["Kyoto", "the temples", "the bamboo forest at dawn", "early-morning walk"],
  ["Reykjavik", "the northern lights", "the glacier hike", "ice trek"],
  ["Marrakech", "the markets", "the cooking class in the medina", "food lesson"],
  ["Oaxaca", "the food", "the mezcal tasting", "spirits sampling"],
  ["Cape Town", "a wedding", "Table Mountain at sunset", "evening summit view"],
  ["Hanoi", "street food", "the night train to Sapa", "overnight rail journey"],
  ["the Dolomites", "hiking", "the via ferrata climb", "cable-assisted route"],
  ["Istanbul", "a conference", "the ferry ride on the Bosphorus", "boat crossing"],
  ["Edinburgh", "the festival", "the ghost tour in the old town", "haunted walk"],
  ["Sicily", "the beaches", "snorkelling off Lampedusa", "underwater swim"],
  ["Montreal", "a friend's birthday", "the jazz bar on Saint-Laurent", "live music night"],
  ["Crete", "a family holiday", "the Samaria gorge walk", "canyon trail"],
];
// race the week before the trip: [said, asked]
export const RACES = [
  ["ran my first 10k", "a running race"], ["did a charity bike ride", "a cycling event"],
  ["swam the open-water mile at the lake", "a swimming event"], ["played in the office chess tournament", "a board-game competition"],
  ["sang at my choir's spring concert", "a choir performance"], ["volunteered at the food bank marathon shift", "a volunteering day"],
];
// [item said, item asked, brand/model]
export const PURCHASES = [
  ["e-bike", "electric bicycle", "a Vanmoof S5"], ["espresso machine", "coffee maker", "a Gaggia Classic"],
  ["used car", "second-hand vehicle", "a 2016 Honda Jazz"], ["mirrorless camera", "new camera body", "a Fujifilm X-T30"],
  ["standing desk", "adjustable workstation", "a Fully Jarvis"], ["electric guitar", "six-string", "a Fender Telecaster"],
  ["road bike", "racing bicycle", "a Canyon Endurace"], ["drone", "quadcopter", "a DJI Mini 3"],
];
// morning drink before -> after
export const DRINKS = [
  ["a flat white with oat milk", "matcha", "green tea powder"], ["black coffee, two cups", "rooibos tea", "a caffeine-free red tea"],
  ["a double espresso", "chicory coffee", "a roasted-root substitute"], ["a latte with soy milk", "hot lemon water", "warm citrus water"],
];
// [hobby said, hobby asked]
export const HOBBIES = [
  ["pottery", "ceramics"], ["salsa dancing", "Latin dance"], ["bouldering", "indoor climbing"], ["Italian lessons", "learning a language"],
  ["woodworking", "carpentry"], ["life drawing", "sketching"], ["improv theatre", "comedy acting"], ["sourdough baking", "bread making"],
];
export const WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday"];
export const PARTNERS = ["Tom", "Sofia", "Daniel", "Priya", "Marco", "Leah", "Kenji", "Amara", "Felix", "Noor", "Oscar", "Hana"];
// [partner job said, asked]
export const PARTNER_JOBS = [
  ["paramedic", "emergency medicine"], ["chef", "cooking in a restaurant"], ["lawyer", "law"], ["firefighter", "fire service"],
  ["vet", "animal medicine"], ["pilot", "flying planes"], ["graphic designer", "illustration and layout"], ["carpenter", "building furniture"],
];
export const SIBLINGS = ["Marta", "Clara", "Joana", "Beatriz", "Lucia", "Irene", "Nadia", "Greta"];
export const FRIENDS = ["Rui", "Zoe", "Ben", "Lena", "Omar", "Tara", "Max", "Ivy"];
// sister's fact: [statement, what-was-done (for "When did I ...?"), answer fragment]
export const SIS_FACTS = [
  ["just bought a little sailboat, she's naming it after our grandmother", "buy a sailboat", "bought a sailboat"],
  ["got a job offer in Singapore and she's taking it", "accept a job in Singapore", "accepted a job offer in Singapore"],
  ["adopted two guinea pigs, which she swears are not a phase", "adopt guinea pigs", "adopted two guinea pigs"],
  ["finished her PhD defense, she's officially a doctor now", "finish a doctorate", "defended her PhD"],
  ["ran off and got a tattoo of a whale on her forearm", "get a whale tattoo", "got a whale tattoo"],
  ["signed up for a solo cycling tour across Portugal", "plan a solo cycling tour", "signed up for a solo cycling tour"],
];
// recommendation by the assistant: [genre asked, title, author]
export const BOOKS = [
  ["sci-fi", "The Long Way to a Small, Angry Planet", "Becky Chambers"], ["mystery", "The Thursday Murder Club", "Richard Osman"],
  ["non-fiction", "Entangled Life", "Merlin Sheldrake"], ["fantasy", "Piranesi", "Susanna Clarke"],
  ["historical", "Wolf Hall", "Hilary Mantel"], ["funny", "Good Omens", "Terry Pratchett and Neil Gaiman"],
];

// ---------- statement templates ----------
export const T = {
  intro: ["Hi! I'm {name}, by the way. I've been living in {cityA} for a few years.",
    "Hey there, my name's {name}. I'm based in {cityA}.",
    "Hello! {name} here. Home for me is a small flat in {cityA}."],
  job: ["I work as a {roleA} at {compA}, which keeps me pretty busy.",
    "Work-wise, I'm a {roleA} over at {compA}.",
    "My day job is {roleA} at a company called {compA}."],
  partner: ["My partner {pn} is a {pjob}, so our schedules are all over the place.",
    "{pn}, my partner, works as a {pjob} and does a lot of night shifts.",
    "I live with my partner {pn}; they're a {pjob}."],
  drinkA: ["I can't start the day without {drinkA}.", "Every morning it's {drinkA} for me, no exceptions."],
  drinkB: ["Update on my habits: I quit coffee {rel}. It's {drinkB} every morning now.",
    "I gave up caffeine {rel} and switched to {drinkB} in the mornings."],
  move: ["Big news: we finally moved to {cityB} {rel}!", "I've been living out of boxes since we relocated to {cityB} {rel}.",
    "{Rel} I packed up the flat in {cityA} and settled in {cityB}. New city, new life."],
  jobB: ["I handed in my notice at {compA}. {Rel} was my first day at {compB} as a {roleB}.",
    "New chapter: I started as a {roleB} at {compB} {rel}.", "So I switched employers: {rel} I joined {compB}, working as a {roleB}."],
  pet: ["We adopted a {breed} {petSaid} {rel}! {petName} is already ruling the house.",
    "Meet the newest family member: {petName}, a {breed} {petSaid} we brought home {rel}.",
    "{Rel} we picked up a {petSaid} from the shelter, a {breed}. We called it {petName}."],
  tripPlan: ["I'm flying to {dest} on {dLong} for {activity}. Can't wait.",
    "Booked it! I leave for {dest} on {dLong}, mostly for {activity}.",
    "The tickets are sorted: {dest}, departing {dLong}. It's all about {activity}."],
  race: ["Legs are sore, I {race} yesterday.", "Yesterday I {race}. Exhausted but happy.",
    "Quick brag: yesterday I {race}!"],
  tripBack: ["I'm back from {dest}. The best part was {highlight}.", "{dest} was incredible, and {highlight} was the highlight for me.",
    "Home again after {dest}. Honestly nothing beat {highlight}."],
  purchase: ["I finally treated myself to {brand} {rel}. My new {itemSaid}!", "Splurged {rel}: {brand}. The {itemSaid} I kept talking about.",
    "{Rel} I picked up a {itemSaid}, {brand}, on sale."],
  hobby: ["I signed up for {hobby} classes {rel}, every {weekday} evening.", "{Rel} I started {hobby} on {weekday} nights. I'm terrible but it's fun.",
    "New hobby alert: {hobby}, {weekday}s after work. First session was {rel}."],
  engaged: ["{pn} proposed {rel}! We're engaged!", "Guess what, {pn} and I got engaged {rel}.",
    "{Rel} {pn} got down on one knee. I said yes!"],
  sister: ["My sister {sis} {sisFact}.", "Family news: {sis}, my sister, {sisFact}."],
  friendTrip: ["My friend {fr} just got back from {fdest} and won't stop talking about {fhigh}.",
    "{fr}, an old friend of mine, spent two weeks in {fdest}. Apparently {fhigh} was unreal."],
  askBook: ["Can you recommend a good {genre} book? I need something for the evenings.",
    "I'm looking for a {genre} novel to read. Any suggestions?"],
  recBook: ["You might enjoy '{title}' by {author}. It's warm, clever and easy to pick up.",
    "I'd suggest '{title}' by {author}; a lot of readers love it."],
  readBook: ["I finished the book you suggested last time. Loved it, thank you!",
    "That novel you pointed me to? Read it in a week. So good."],
};
export const ACKS = ["That's wonderful news!", "Congratulations, that's a big step.", "Oh, how exciting!", "Thanks for telling me. How does it feel?",
  "Nice! Tell me more whenever you like.", "That sounds lovely.", "Good for you!", "I'll remember that."];

// ---------- small talk: [user, assistant] ----------
export const SMALL = [
  ["Ugh, it's been raining all week here.", "Sorry to hear that. A good week for staying in, at least?"],
  ["I'm so tired today, didn't sleep well.", "That's rough. Maybe an early night tonight?"],
  ["Can you help me write a polite email to my landlord about the heating?", "Of course. Start by describing the problem and when it began, then ask for a date for the repair."],
  ["What's a quick dinner I can make with rice and eggs?", "Egg fried rice is a classic: day-old rice, scrambled eggs, soy sauce, spring onions."],
  ["I've been binge-watching a detective series, it's addictive.", "Those are hard to stop! Is it a new one?"],
  ["Traffic was a nightmare this morning.", "Commutes like that are draining. Did you make it in on time?"],
  ["Remind me, how many grams are in a cup of flour?", "Roughly 120 to 125 grams for all-purpose flour."],
  ["I think I need a new pair of running shoes.", "Worth going to a shop where they can look at your stride."],
  ["Any tips for staying focused in the afternoon?", "Short walks, water, and a clear list of the next three tasks help a lot."],
  ["Lol my neighbour's parrot has learned to whistle the ringtone.", "That must be confusing every time it goes off!"],
  ["How do I get wine stains out of a tablecloth?", "Blot it, cover it with salt or baking soda, then wash in cold water."],
  ["I'm thinking of repainting the living room.", "Fun project! Lighter colours can make a room feel bigger."],
  ["Do you know a good stretch for a stiff neck?", "Gentle chin tucks and slow side tilts, holding each for 20 seconds."],
  ["The weekend went by way too fast.", "They always do. Did you get to rest?"],
  ["Can you convert 30 degrees Celsius to Fahrenheit?", "30 °C is 86 °F."],
  ["I keep forgetting to water my plants.", "A weekly reminder on your phone could help."],
  ["What's the difference between baking soda and baking powder?", "Baking powder already contains an acid; baking soda needs one in the recipe."],
  ["Work was hectic today, too many meetings.", "Back-to-back meetings are exhausting. Any chance to block focus time?"],
  ["I had the best pastry from the bakery around the corner.", "A good bakery nearby is a real treasure."],
  ["Should I learn spreadsheets properly? I only know the basics.", "Pivot tables and lookups would cover most everyday needs."],
  ["My phone battery dies by lunchtime now.", "Check which apps use the most battery; it may also be time for a replacement."],
  ["Is it normal to feel nervous before a dentist appointment?", "Very normal. Telling the dentist helps; they can go slower."],
  ["Give me a fun fact, I'm bored.", "Octopuses have three hearts and blue blood."],
  ["I burned the toast again.", "Happens to the best of us. Maybe turn the dial down a notch?"],
  ["We watched a documentary about deep-sea fish last night.", "The deep sea is wild. Anything memorable?"],
  ["How long should I boil an egg for a runny yolk?", "About six minutes from boiling water, then straight into cold water."],
  ["I'm trying to drink more water.", "A bottle on your desk makes it much easier."],
  ["Any idea what to get a coworker for their farewell?", "A nice notebook or a plant, plus a card everyone signs, is always welcome."],
  ["It's finally sunny, I might go for a walk.", "Enjoy it! A bit of sunlight does wonders."],
  ["I cleaned out the fridge and found things I don't want to talk about.", "Ha, a brave act. Fresh start!"],
  ["Can you summarise what a Roth IRA is in one sentence?", "It's a US retirement account funded with taxed money, whose qualified withdrawals are tax-free."],
  ["The power went out for two hours yesterday.", "That's annoying. Everything back to normal now?"],
];
export const HELLO = [["Hi again!", "Welcome back, {name}! What's new?"], ["Hey, it's me.", "Hi {name}, good to hear from you."],
  ["Morning!", "Good morning, {name}. How have you been?"], ["Hello hello.", "Hello {name}! What's on your mind today?"]];
export const BYE = [["Okay, gotta run. Thanks!", "Anytime. Talk soon!"], ["That's all for now.", "Sounds good, take care."],
  ["Thanks, this helped.", "Glad to help, {name}."], ["I'll head off, bye!", "Bye! Have a good one."]];
export const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
